// The group-batch GEMM routines of the CPU BLAS libraries that define them (blas_calls.hpp),
// LP64: Intel oneMKL's cblas_?gemm_batch and ?gemm_batch, OpenBLAS >= 0.3.30's
// cblas_?gemm_batch (interface/gemm_batch.c), AOCL-BLAS's. Group g holds group_size[g] matrices
// that share its flags, sizes, leading dimensions and scalars; the matrices' pointers are listed
// group after group. Unlike the strided batches (batch_calls.cpp), the libraries read these
// calls alike: pointers, not strides, so complex calls mean the same everywhere.
//
// A valid call is decided group by group: a group whose shape the host path would take is served
// matrix by matrix exactly as the single call on that matrix would be (its own decision line, the
// columns the GPU leaves finished on the CPU BLAS's xGEMM); every run of consecutive groups it
// does not take goes to the CPU BLAS's group routine as one call of those groups (its arrays from
// that group on), so that small matrices keep the CPU library's batched execution. An invalid call,
// an empty one, and one whose matrices of C overlap (OpenBLAS computes the matrices in parallel)
// are forwarded whole and unchanged, so the CPU BLAS's xerbla reports what it reports.
//
// A CPU BLAS without the routine (reference BLAS, OpenBLAS < 0.3.30, a program linked -lozdgemm in
// place of -lblas) gets a valid call as a loop of its single xGEMM; an invalid call then writes
// nothing and is logged as an error (no xerbla: see batch_calls.cpp).
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/logging.hpp"
#include "dispatch/call_log.hpp"
#include "interpose/blas_calls.hpp"

namespace ozdgemm::detail {
namespace {

constexpr gemm_family kLp64 = gemm_family::lp64;

int count_of(const fortran_group_args& x) { return *x.group_count; }
int count_of(const cblas_group_args& x) { return x.group_count; }
bool has_count(const fortran_group_args& x) { return x.group_count != nullptr; }
bool has_count(const cblas_group_args&) { return true; }

// Matrix `i` (of group g) as the single call of the routine's own API. Complex scalars and
// matrices are pairs of doubles; the real view of a complex call (null scalars allowed: for the
// checks only) carries its shape and flags.
fortran_gemm_args<kLp64> single(const fortran_group_args& x, int g, int64_t i, int w) {
  return {x.transa + g,
          x.transb + g,
          x.m + g,
          x.n + g,
          x.k + g,
          x.alpha + static_cast<int64_t>(w) * g,
          static_cast<const double*>(i >= 0 ? x.a[i] : nullptr),
          x.lda + g,
          static_cast<const double*>(i >= 0 ? x.b[i] : nullptr),
          x.ldb + g,
          x.beta + static_cast<int64_t>(w) * g,
          static_cast<double*>(i >= 0 ? x.c[i] : nullptr),
          x.ldc + g,
          1,
          1};
}
cblas_dgemm_args<kLp64> real_single(const cblas_group_args& x, int g, int64_t i) {
  return {x.layout,
          x.transa[g],
          x.transb[g],
          x.m[g],
          x.n[g],
          x.k[g],
          x.alpha[g],
          static_cast<const double*>(i >= 0 ? x.a[i] : nullptr),
          x.lda[g],
          static_cast<const double*>(i >= 0 ? x.b[i] : nullptr),
          x.ldb[g],
          x.beta[g],
          static_cast<double*>(i >= 0 ? x.c[i] : nullptr),
          x.ldc[g]};
}
cblas_zgemm_args<kLp64> complex_single(const cblas_group_args& x, int g, int64_t i) {
  return {x.layout, x.transa[g], x.transb[g], x.m[g],   x.n[g],         x.k[g], x.alpha + 2 * g,
          x.a[i],   x.lda[g],    x.b[i],      x.ldb[g], x.beta + 2 * g, x.c[i], x.ldc[g]};
}

// Group g's shape and flags are valid (xGEMM's checks; the scalars are not read).
bool valid_group(const fortran_group_args& x, int g) {
  host_gemm h{};
  fortran_gemm_args<kLp64> f = single(x, g, -1, 1);
  const double one = 1.0;
  f.alpha = f.beta = &one;
  return to_host_gemm(f, &h);
}
bool valid_group(const cblas_group_args& x, int g) {
  host_gemm h{};
  cblas_dgemm_args<kLp64> d{x.layout, x.transa[g], x.transb[g], x.m[g],   x.n[g],
                            x.k[g],   1.0,         nullptr,     x.lda[g], nullptr,
                            x.ldb[g], 1.0,         nullptr,     x.ldc[g]};
  return to_host_gemm(d, &h);
}

// Group g's column-major m, n (row-major CBLAS: swapped) and k.
struct shape3 {
  int64_t m, n, k;
};
shape3 shape_of(const fortran_group_args& x, int g) { return {x.m[g], x.n[g], x.k[g]}; }
shape3 shape_of(const cblas_group_args& x, int g) {
  return x.layout == kCblasRowMajor ? shape3{x.n[g], x.m[g], x.k[g]}
                                    : shape3{x.m[g], x.n[g], x.k[g]};
}

// The call as a list of groups, once its arrays are known to hold valid groups.
struct group_plan {
  std::vector<int64_t> first;  // index of each group's first matrix; first[count] = the total
};

constexpr const char* kInvalid = "invalid arguments";
constexpr const char* kInternal = "internal error";

// Why the call is forwarded whole (a static string), or nullptr with `plan` filled in (also for
// the valid calls forwarded whole: empty, or with overlapping matrices of C).
template <class Args>
const char* whole_call_declines(const Args& x, int w, group_plan* plan) {
  if (!has_count(x) || count_of(x) < 0) return kInvalid;
  const int groups = count_of(x);
  if (groups > 0 && (x.group_size == nullptr || x.transa == nullptr || x.transb == nullptr ||
                     x.m == nullptr || x.n == nullptr || x.k == nullptr || x.alpha == nullptr ||
                     x.lda == nullptr || x.ldb == nullptr || x.beta == nullptr || x.ldc == nullptr))
    return kInvalid;
  plan->first.assign(static_cast<size_t>(groups) + 1, 0);
  for (int g = 0; g < groups; ++g) {
    if (x.group_size[g] < 0 || !valid_group(x, g)) return kInvalid;
    plan->first[g + 1] = plan->first[g] + x.group_size[g];
  }
  const int64_t total = plan->first[groups];
  if (total == 0) return "empty batch";
  if (x.a == nullptr || x.b == nullptr || x.c == nullptr) return kInvalid;
  // Every C apart from every other: sort the spans [c, c + extent) of the non-empty ones.
  std::vector<std::pair<uintptr_t, uintptr_t>> spans;
  spans.reserve(static_cast<size_t>(total));
  for (int g = 0; g < groups; ++g) {
    const shape3 s = shape_of(x, g);
    if (s.m == 0 || s.n == 0) continue;
    const uintptr_t bytes = static_cast<uintptr_t>(x.ldc[g] * (s.n - 1) + s.m) * 8u * w;
    for (int64_t i = plan->first[g]; i < plan->first[g + 1]; ++i) {
      const uintptr_t c = reinterpret_cast<uintptr_t>(x.c[i]);
      spans.emplace_back(c, c + bytes);
    }
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second) return "matrices of C overlap";
  return nullptr;
}

void log_forwarded(const char* entry, const shape3& s, const char* why) noexcept {
  log_call({entry, s.m, s.n, s.k, outcome::native, why, 0, 0.0, 0.0, 0.0});
}

// Groups [g0, g1) on the CPU BLAS's group routine `cpu` (the caller's arrays from g0 on), or,
// without one, matrix by matrix on its single xGEMM (`single(g, i)`).
template <class Single>
void cpu_groups(const char* cpu, const fortran_group_args& x, const group_plan& p, int g0, int g1,
                int w, Single one) noexcept {
  if (void* f = cpu_routine(cpu, false)) {
    const int groups = g1 - g0;
    const int64_t i0 = p.first[g0];
    reinterpret_cast<fortran_gemm_group_fn>(f)(
        x.transa + g0, x.transb + g0, x.m + g0, x.n + g0, x.k + g0, x.alpha + w * g0, x.a + i0,
        x.lda + g0, x.b + i0, x.ldb + g0, x.beta + w * g0, x.c + i0, x.ldc + g0, &groups,
        x.group_size + g0, x.transa_len, x.transb_len);
    return;
  }
  for (int g = g0; g < g1; ++g)
    for (int64_t i = p.first[g]; i < p.first[g + 1]; ++i) one(g, i);
}
template <class Single>
void cpu_groups(const char* cpu, const cblas_group_args& x, const group_plan& p, int g0, int g1,
                int w, Single one) noexcept {
  if (void* f = cpu_routine(cpu, false)) {
    const int64_t i0 = p.first[g0];
    reinterpret_cast<cblas_gemm_group_fn>(f)(x.layout, x.transa + g0, x.transb + g0, x.m + g0,
                                             x.n + g0, x.k + g0, x.alpha + w * g0, x.a + i0,
                                             x.lda + g0, x.b + i0, x.ldb + g0, x.beta + w * g0,
                                             x.c + i0, x.ldc + g0, g1 - g0, x.group_size + g0);
    return;
  }
  for (int g = g0; g < g1; ++g)
    for (int64_t i = p.first[g]; i < p.first[g + 1]; ++i) one(g, i);
}

// The whole call unchanged on the CPU BLAS's routine `cpu`; without one, a valid call matrix by
// matrix on its single xGEMM, an invalid one logged with C untouched.
template <class Args, class Single>
void forward_whole(const char* entry, const char* cpu, const Args& x, int w, Single one) noexcept {
  if (void* f = cpu_routine(cpu, false)) {
    if constexpr (std::is_same_v<Args, fortran_group_args>)
      reinterpret_cast<fortran_gemm_group_fn>(f)(
          x.transa, x.transb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb, x.beta, x.c, x.ldc,
          x.group_count, x.group_size, x.transa_len, x.transb_len);
    else
      reinterpret_cast<cblas_gemm_group_fn>(f)(x.layout, x.transa, x.transb, x.m, x.n, x.k, x.alpha,
                                               x.a, x.lda, x.b, x.ldb, x.beta, x.c, x.ldc,
                                               x.group_count, x.group_size);
    return;
  }
  group_plan p;
  const char* why = kInternal;
  try {
    why = whole_call_declines(x, w, &p);
  } catch (...) {
  }
  if (why == kInvalid || why == kInternal) return log_not_run(entry, cpu);
  const int groups = count_of(x);  // valid: empty, or C overlapping (run in order)
  for (int g = 0; g < groups; ++g)
    for (int64_t i = p.first[g]; i < p.first[g + 1]; ++i) one(g, i);
}

// What one kind of call (Fortran or CBLAS, real or complex) needs: the CPU BLAS's routine, the
// doubles per element, why the host path would not take group g, and matrix i of group g served
// (offered to the host path, else run on the CPU BLAS) or run on the CPU BLAS alone.
template <class Args, class Offer, class Cpu>
void serve_groups(const char* entry, const char* cpu, const Args& x, int w, Offer offer,
                  Cpu cpu_one) noexcept {
  const bool outermost = !inside_interception();
  interception_scope scope;
  group_plan p;
  const char* why = "inside the library";
  if (outermost) {
    why = kInternal;
    try {
      why = whole_call_declines(x, w, &p);
    } catch (...) {
    }
    if (why != nullptr) {
      const bool any =
          has_count(x) && count_of(x) > 0 && x.m != nullptr && x.n != nullptr && x.k != nullptr;
      log_forwarded(entry, any ? shape_of(x, 0) : shape3{0, 0, 0}, why);
    }
  }
  if (why != nullptr) return forward_whole(entry, cpu, x, w, cpu_one);
  const int groups = count_of(x);
  try {
    logger().debug("{}: {} groups, {} matrices", entry, groups, p.first[groups]);
  } catch (...) {
  }
  int run = -1;  // the first group of the current run of groups the host path declines
  for (int g = 0; g <= groups; ++g) {
    const char* declines = nullptr;
    if (g < groups) {
      const shape3 s = shape_of(x, g);
      const bool cpu_gemm = w == 1 ? cpu_fortran_gemm<kLp64, gemm_routine::dgemm>() != nullptr
                                   : cpu_fortran_gemm<kLp64, gemm_routine::zgemm>() != nullptr;
      declines = x.group_size[g] == 0   ? "empty group"
                 : s.m == 0 || s.n == 0 ? "empty matrices"
                 : !cpu_gemm            ? "no CPU BLAS GEMM"
                                        : host_gemm_declines(s.m, s.n, s.k, w == 2);
      if (declines != nullptr) {
        if (x.group_size[g] > 0) log_forwarded(entry, s, declines);
        if (run < 0) run = g;
        continue;
      }
    }
    if (run >= 0) {
      cpu_groups(cpu, x, p, run, g, w, cpu_one);
      run = -1;
    }
    if (g == groups) break;
    for (int64_t i = p.first[g]; i < p.first[g + 1]; ++i) offer(g, i);
  }
}

// Matrix `d` of a real group the host path takes: offered as the single call on it, the columns
// the GPU leaves (or the whole, when it declines) on the CPU BLAS's DGEMM.
template <class Single, class Forward>
void serve_real_matrix(const char* entry, const Single& d, Forward forward) noexcept {
  host_gemm h{};
  if (!to_host_gemm(d, &h))
    forward(entry, d);
  else if (!offer_host_gemm<kLp64>(entry, h))
    cpu_dgemm<kLp64>(entry, h);
}

}  // namespace

void serve_dgemm_group(const char* entry, const fortran_group_args& x) noexcept {
  serve_groups(
      entry, "dgemm_batch_", x, 1,
      [&](int g, int64_t i) {
        serve_real_matrix(entry, single(x, g, i, 1), forward_fortran<kLp64, gemm_routine::dgemm>);
      },
      [&](int g, int64_t i) {
        forward_fortran<kLp64, gemm_routine::dgemm>(entry, single(x, g, i, 1));
      });
}

void serve_dgemm_group(const char* entry, const cblas_group_args& x) noexcept {
  serve_groups(
      entry, "cblas_dgemm_batch", x, 1,
      [&](int g, int64_t i) {
        serve_real_matrix(entry, real_single(x, g, i), forward_dgemm<kLp64>);
      },
      [&](int g, int64_t i) { forward_dgemm<kLp64>(entry, real_single(x, g, i)); });
}

void serve_zgemm_group(const char* entry, const fortran_group_args& x) noexcept {
  serve_groups(
      entry, "zgemm_batch_", x, 2,
      [&](int g, int64_t i) {
        const fortran_gemm_args<kLp64> f = single(x, g, i, 2);
        if (!offer_host_zgemm<kLp64>(entry, f))
          forward_fortran<kLp64, gemm_routine::zgemm>(entry, f);
      },
      [&](int g, int64_t i) {
        forward_fortran<kLp64, gemm_routine::zgemm>(entry, single(x, g, i, 2));
      });
}

void serve_zgemm_group(const char* entry, const cblas_group_args& x) noexcept {
  serve_groups(
      entry, "cblas_zgemm_batch", x, 2,
      [&](int g, int64_t i) {
        const cblas_zgemm_args<kLp64> z = complex_single(x, g, i);
        if (!offer_host_zgemm<kLp64>(entry, z)) forward_zgemm<kLp64>(entry, z);
      },
      [&](int g, int64_t i) { forward_zgemm<kLp64>(entry, complex_single(x, g, i)); });
}

}  // namespace ozdgemm::detail
