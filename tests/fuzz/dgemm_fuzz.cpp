// libFuzzer target: the input bytes choose
//   1. arguments for the checks of ozdgemm_dgemm and ozdgemm_dgemm_reference: op characters
//      and enums (valid and not), m, n, k, ld from 2^31- to 2^63-scale values, negatives,
//      options, null and poisoned pointers. An oracle written from the documented rules (not
//      from the code) predicts the status; the call is made only when the prediction is a
//      status returned before any memory is touched, with every pointer in a PROT_NONE
//      mapping, so a check that let a call through would crash the target;
//   2. a configuration and a call for the decision policy (dispatch/decision), whose
//      invariants are checked;
//   3. a small problem (m, n, k <= 8) for the host reference, with data, alpha and beta from
//      the bytes (NaN, Inf, subnormals, values near DBL_MAX), checked element by element
//      against the exact result (GMP rationals) within the documented error bound
//      (tests/cpu/accuracy_bound.hpp), or against native DGEMM's NaN/Inf class, and for
//      writes outside C (ld > m) or into A and B.
// Any violated expectation aborts (a finding). Run: ozdgemm_fuzz tests/fuzz/corpus.
#include <gmpxx.h>
#include <sys/mman.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "dispatch/decision.hpp"
#include "dispatch/gpu_rates.hpp"
#include "dispatch/settings.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/host_reference.hpp"
#include "support/dd_reference.hpp"

namespace {

namespace d = ozdgemm::detail;
using i128 = __int128;

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "ozdgemm_fuzz: %s\n", what);
  std::abort();
}
#define FUZZ_EXPECT(cond) \
  do {                    \
    if (!(cond)) finding(#cond); \
  } while (0)

// Consumes the input; past its end every read is zero.
class reader {
 public:
  reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  uint8_t u8() { return i_ < n_ ? p_[i_++] : 0; }
  uint64_t u64() {
    uint64_t v = 0;
    for (int b = 0; b < 8; ++b) v |= uint64_t{u8()} << (8 * b);
    return v;
  }
  double f64() {
    const uint64_t b = u64();
    double x;
    std::memcpy(&x, &b, sizeof x);
    return x;
  }

 private:
  const uint8_t* p_;
  size_t n_, i_ = 0;
};

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1 - 16;  // the device entry's documented limit

int64_t pick_size(reader& r) {
  const uint8_t b = r.u8();
  switch (b % 12) {
    case 0: case 1: case 2: case 3: return r.u8() % 9;
    case 4: return -1 - r.u8();
    case 5: return kI64Min;
    case 6: return kI64Max;
    case 7: return (int64_t{1} << 31) - 2 + r.u8() % 3;
    case 8: return int64_t{1} << 62;
    case 9: return int64_t{1} << (r.u8() % 63);
    case 10: return kMaxDim - (r.u8() % 2);
    default: return static_cast<int64_t>(r.u64());
  }
}

double pick_scalar(reader& r) {
  switch (r.u8() % 12) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return 1.0;
    case 3: return -1.5;
    case 4: return std::numeric_limits<double>::infinity();
    case 5: return -std::numeric_limits<double>::infinity();
    case 6: return std::numeric_limits<double>::quiet_NaN();
    case 7: return std::numeric_limits<double>::denorm_min() * (1 + r.u8());
    case 8: return std::numeric_limits<double>::max() * (r.u8() % 2 ? -1 : 1);
    case 9: return std::ldexp(1.0 + r.u8() / 256.0, static_cast<int>(r.u8() % 2100) - 1074);
    default: return r.f64();
  }
}

// Matrix entries: mostly ordinary, with the special classes and the extremes of the range.
double pick_entry(reader& r) {
  const uint8_t b = r.u8();
  if (b < 128) return (static_cast<int>(r.u8()) - 128) / 32.0;
  if (b < 160) return std::ldexp((static_cast<int>(r.u8()) - 128) / 128.0,
                                 static_cast<int>(r.u8() % 2100) - 1074 + 1);
  return pick_scalar(r);
}

// ---------------------------------------------------------------------------------------------
// 1. Argument checks.

const char kOps[] = {'N', 'n', 'T', 't', 'C', 'c', 'X', '\0', 'R', 'H'};

bool op_char(char c, bool* trans) {
  if (c == 'N' || c == 'n') return *trans = false, true;
  if (c == 'T' || c == 't' || c == 'C' || c == 'c') return *trans = true, true;
  return false;
}

// Products of non-negative sizes in 128 bits, saturating (the oracle's own arithmetic must
// not overflow either).
constexpr i128 kSat = static_cast<i128>(1) << 120;
i128 mul(i128 a, i128 b) {
  i128 r;
  return (__builtin_mul_overflow(a, b, &r) || r > kSat) ? kSat : r;
}

// Does a rows x cols matrix at p with leading dimension ld lie in the address space?
bool fits_memory(const void* p, int64_t rows, int64_t cols, int64_t ld) {
  if (rows == 0 || cols == 0) return true;
  const i128 extent = mul(cols - 1, ld) + rows;
  const i128 bytes = mul(extent, 8);
  if (bytes > PTRDIFF_MAX) return false;
  return static_cast<i128>(reinterpret_cast<uintptr_t>(p)) + bytes <=
         static_cast<i128>(~uintptr_t{0});
}

struct poison {
  char* base;
  poison() {
    void* p = mmap(nullptr, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) finding("mmap");
    base = static_cast<char*>(p);
  }
  double* at(int i) { return reinterpret_cast<double*>(base + 4096 * i); }
};

poison& poisoned() {
  static poison* p = new poison();
  return *p;
}

const double* pick_pointer(reader& r, int slot) {
  switch (r.u8() % 8) {
    case 0: return nullptr;
    case 1: return reinterpret_cast<const double*>(~uintptr_t{0} - 4095);  // top of the space
    default: return poisoned().at(slot);
  }
}

enum class expect { status, runs, unknown };

void fuzz_argument_checks(reader& r) {
  const char ta = kOps[r.u8() % sizeof kOps], tb = kOps[r.u8() % sizeof kOps];
  const int64_t m = pick_size(r), n = pick_size(r), k = pick_size(r);
  const int64_t lda = pick_size(r), ldb = pick_size(r), ldc = pick_size(r);
  // Only values inside the enums' ranges: C may pass any int, but C++ code (this target and
  // the library) reading an enum outside its range is undefined behaviour that UBSan reports.
  ozdgemm_options_t o{static_cast<int>(r.u8() % 24), static_cast<ozdgemm_scaling_t>(r.u8() % 2),
                      OZDGEMM_ACCURACY_NATIVE};
  const double alpha = pick_scalar(r);
  const double* A = pick_pointer(r, 0);
  const double* B = pick_pointer(r, 1);
  double* C = const_cast<double*>(pick_pointer(r, 2));

  // The documented rules: cublasDgemm's (sizes >= 0, ld >= max(1, rows as stored)), options
  // in range, m or n == 0 returns at once, operands must fit the address space, and a scratch
  // that cannot be counted is an allocation failure.
  bool trans_a = false, trans_b = false;
  const bool ops_ok = op_char(ta, &trans_a) && op_char(tb, &trans_b);
  // num_moduli 0 is OZDGEMM_MODULI_AUTO, whose target (accuracy 0: native) is valid; auto sizes
  // its workspace and scratch for 20 moduli.
  const bool automatic = o.num_moduli == OZDGEMM_MODULI_AUTO;
  const int sized_moduli = automatic ? 20 : o.num_moduli;
  const bool opts_ok = ((o.num_moduli >= 2 && o.num_moduli <= 20) || automatic) &&
                       (o.scaling == OZDGEMM_SCALING_FAST || o.scaling == OZDGEMM_SCALING_ACCURATE);
  const int64_t rows_a = trans_a ? k : m, cols_a = trans_a ? m : k;
  const int64_t rows_b = trans_b ? n : k, cols_b = trans_b ? k : n;
  const bool shape_ok = m >= 0 && n >= 0 && k >= 0 && lda >= std::max<int64_t>(1, rows_a) &&
                        ldb >= std::max<int64_t>(1, rows_b) && ldc >= std::max<int64_t>(1, m);
  expect e = expect::status;
  ozdgemm_status_t want = OZDGEMM_STATUS_SUCCESS;
  if (!ops_ok || !shape_ok || !opts_ok) {
    want = OZDGEMM_STATUS_INVALID_VALUE;
  } else if (m == 0 || n == 0) {
    want = OZDGEMM_STATUS_SUCCESS;
  } else if (!fits_memory(C, m, n, ldc) ||
             (alpha != 0.0 && k > 0 &&
              (!fits_memory(A, rows_a, cols_a, lda) || !fits_memory(B, rows_b, cols_b, ldb)))) {
    want = OZDGEMM_STATUS_INVALID_VALUE;
  } else if (alpha != 0.0 && k > 0) {
    const i128 s = sized_moduli, mk = mul(m, k), nk = mul(n, k);
    const i128 scratch = mul(s + 1, mk + nk) + mul(8, mul(m, n));
    if (mul(s, mk) > PTRDIFF_MAX || mul(s, nk) > PTRDIFF_MAX) want = OZDGEMM_STATUS_ALLOC_FAILED;
    else e = scratch > PTRDIFF_MAX ? expect::unknown : expect::runs;
  } else {
    e = expect::runs;  // C = beta C would be written
  }
  if (e == expect::status) {
    const ozdgemm_status_t got = ozdgemm_dgemm_reference(ta, tb, m, n, k, alpha, A, lda, B, ldb,
                                                         0.5, C, ldc, o);
    if (got != want) {
      std::fprintf(stderr, "reference %c%c m=%lld n=%lld k=%lld ld=%lld,%lld,%lld s=%d: %d != %d\n",
                   ta, tb, (long long)m, (long long)n, (long long)k, (long long)lda,
                   (long long)ldb, (long long)ldc, o.num_moduli, got, want);
      finding("ozdgemm_dgemm_reference status");
    }
  }

  // The device entry: the same, plus the handle, alpha/beta pointers and 32-bit INT8 sizes.
  static const cublasOperation_t kDevOps[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C,
                                              CUBLAS_OP_CONJG};  // not valid for DGEMM
  const cublasOperation_t da = kDevOps[r.u8() % 4], db = kDevOps[r.u8() % 4];
  const bool handle_null = r.u8() % 8 == 0;
  const double* alpha_p = r.u8() % 8 == 0 ? nullptr : poisoned().at(3);
  const double* beta_p = r.u8() % 8 == 0 ? nullptr : poisoned().at(4);
  const auto handle = handle_null ? nullptr : reinterpret_cast<cublasHandle_t>(poisoned().at(5));
  trans_a = da != CUBLAS_OP_N;
  trans_b = db != CUBLAS_OP_N;
  const bool dops_ok = static_cast<unsigned>(da) <= 2 && static_cast<unsigned>(db) <= 2;
  const int64_t ra = trans_a ? k : m, ca = trans_a ? m : k, rb = trans_b ? n : k, cb = trans_b ? k : n;
  const bool dshape_ok = m >= 0 && n >= 0 && k >= 0 && lda >= std::max<int64_t>(1, ra) &&
                         ldb >= std::max<int64_t>(1, rb) && ldc >= std::max<int64_t>(1, m);
  e = expect::status;
  if (handle_null) {
    want = OZDGEMM_STATUS_NOT_INITIALIZED;
  } else if (!dops_ok || !dshape_ok || !opts_ok || alpha_p == nullptr || beta_p == nullptr) {
    want = OZDGEMM_STATUS_INVALID_VALUE;
  } else if (m == 0 || n == 0) {
    want = OZDGEMM_STATUS_SUCCESS;
  } else if (m > kMaxDim || n > kMaxDim || k > kMaxDim || !fits_memory(C, m, n, ldc) ||
             (k > 0 && (!fits_memory(A, ra, ca, lda) || !fits_memory(B, rb, cb, ldb)))) {
    want = OZDGEMM_STATUS_INVALID_VALUE;
  } else if (k == 0) {
    e = expect::runs;
  } else {
    // Residue planes alone (s m_pad k_pad + s n_pad k_pad bytes, 4 s m_pad n_pad for the
    // products) past PTRDIFF_MAX: certainly an allocation failure. Far below: the call runs.
    const i128 s = sized_moduli, mp = (m + 15) / 16 * 16, np = (n + 15) / 16 * 16,
               kp = (k + 15) / 16 * 16;
    // (m, n, k <= kMaxDim here: every product below fits in 128 bits.)
    const i128 low = s * mp * kp + s * np * kp + 4 * s * mp * np;
    const i128 high = low + mp * kp + np * kp + 4 * ((kp + 131055) / 131056 + 1) * mp * np +
                      64 * (mp + np) + (1 << 20);
    if (low > PTRDIFF_MAX) want = OZDGEMM_STATUS_ALLOC_FAILED;
    else e = high <= PTRDIFF_MAX ? expect::runs : expect::unknown;
  }
  if (e == expect::status) {
    const ozdgemm_status_t got = ozdgemm_dgemm(handle, da, db, m, n, k, alpha_p, A, lda, B, ldb,
                                               beta_p, C, ldc, o);
    if (got != want) {
      std::fprintf(stderr, "device %d%d m=%lld n=%lld k=%lld ld=%lld,%lld,%lld: %d != %d\n", da, db,
                   (long long)m, (long long)n, (long long)k, (long long)lda, (long long)ldb,
                   (long long)ldc, got, want);
      finding("ozdgemm_dgemm status");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Decision policy.

void fuzz_decision(reader& r) {
  d::config c;
  c.mode = static_cast<d::run_mode>(r.u8() % 3);
  const int pick = r.u8() % 21;  // 2..20 fixed, 0 auto, 1 certified
  c.moduli = pick == 0   ? d::moduli_setting::automatic()
             : pick == 1 ? d::moduli_setting::certified()
                         : d::moduli_setting::fixed(pick);
  c.scaling = r.u8() % 2 ? d::scaling_mode::fast : d::scaling_mode::accurate;
  c.auto_margin = (r.u8() % 100) / 100.0;  // config accepts [0, 1)
  const int64_t floor_choice = pick_size(r);
  c.min_dim = floor_choice < 0 ? 0 : floor_choice;
  // Sizes reach the policy after the argument checks: 0 <= m, n, k (< 2^31 from BLAS ints,
  // < 2^63 from the _64 cuBLAS entries).
  auto dim = [&] {
    const int64_t v = pick_size(r);
    return v < 0 ? -(v + 1) : v;
  };
  const int64_t m = dim(), n = dim(), k = dim();
  const bool reads_c = r.u8() % 2;
  // The rates of one GPU of the published table.
  const d::published_table t = d::published_gpus();
  const d::gpu_rates rates = d::prior_rates(t.begin[r.u8() % (t.end - t.begin)]);
  for (const d::call_site site : {d::call_site::device, d::call_site::host}) {
    const d::route dec = d::decide_route(c, site, nullptr, m, n, k, reads_c, rates);
    const d::prediction& p = dec.predicted;
    FUZZ_EXPECT(p.native_ms >= 0 && p.emulated_ms >= 0);  // also false for NaN
    FUZZ_EXPECT(dec.reason != nullptr && dec.reason[0] != '\0');
    switch (c.mode) {
      case d::run_mode::native: FUZZ_EXPECT(!dec.emulate); break;
      case d::run_mode::emulate: FUZZ_EXPECT(dec.emulate); break;
      case d::run_mode::automatic:
        if (std::min({m, n, k}) < c.min_dim) FUZZ_EXPECT(!dec.emulate);
        if (dec.emulate) FUZZ_EXPECT(p.emulated_ms < (1.0 - c.auto_margin) * p.native_ms);
        break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 3. The host reference on small shapes, against exact arithmetic.

mpq_class exact(double x) { return mpq_class(x); }  // mpq_set_d is exact

mpq_class pow2(int e) {
  mpz_class z = 1;
  if (e >= 0) {
    mpz_mul_2exp(z.get_mpz_t(), z.get_mpz_t(), e);
    return mpq_class(z);
  }
  mpz_mul_2exp(z.get_mpz_t(), z.get_mpz_t(), -e);
  return mpq_class(1, z);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

const char* fp_class(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "+Inf" : "-Inf";
  return "finite";
}

void fuzz_reference(reader& r) {
  const char ops[] = {'N', 'T', 'n', 'c'};
  const char ta = ops[r.u8() % 4], tb = ops[r.u8() % 4];
  const int64_t m = r.u8() % 9, n = r.u8() % 9, k = r.u8() % 9;
  const bool at = ta != 'N' && ta != 'n', bt = tb != 'N' && tb != 'n';
  const int64_t ra = at ? k : m, ca = at ? m : k, rb = bt ? n : k, cb = bt ? k : n;
  const int64_t lda = std::max<int64_t>(1, ra) + r.u8() % 3;
  const int64_t ldb = std::max<int64_t>(1, rb) + r.u8() % 3;
  const int64_t ldc = std::max<int64_t>(1, m) + r.u8() % 3;
  const ozdgemm_options_t o{2 + r.u8() % 19,
                            r.u8() % 2 ? OZDGEMM_SCALING_FAST : OZDGEMM_SCALING_ACCURATE,
                            OZDGEMM_ACCURACY_NATIVE};
  const double alpha = pick_scalar(r), beta = pick_scalar(r);
  std::vector<double> A(std::max<int64_t>(1, lda * ca)), B(std::max<int64_t>(1, ldb * cb)),
      C(std::max<int64_t>(1, ldc * n));
  for (double& x : A) x = pick_entry(r);
  for (double& x : B) x = pick_entry(r);
  for (double& x : C) x = pick_entry(r);
  const std::vector<double> A0 = A, B0 = B, C0 = C;

  const ozdgemm_status_t st = ozdgemm_dgemm_reference(ta, tb, m, n, k, alpha, A.data(), lda,
                                                      B.data(), ldb, beta, C.data(), ldc, o);
  FUZZ_EXPECT(st == OZDGEMM_STATUS_SUCCESS);
  for (size_t e = 0; e < A.size(); ++e) FUZZ_EXPECT(same_bits(A[e], A0[e]));
  for (size_t e = 0; e < B.size(); ++e) FUZZ_EXPECT(same_bits(B[e], B0[e]));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = m; i < ldc; ++i) FUZZ_EXPECT(same_bits(C[j * ldc + i], C0[j * ldc + i]));
  if (m == 0 || n == 0) {
    for (size_t e = 0; e < C.size(); ++e) FUZZ_EXPECT(same_bits(C[e], C0[e]));
    return;
  }
  if (alpha == 0.0 || k == 0) {  // C = beta C, computed exactly as one product; beta == 0: 0
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        const double want = beta == 0.0 ? 0.0 : beta * C0[j * ldc + i];
        const double got = C[j * ldc + i];
        FUZZ_EXPECT(std::isnan(want) ? std::isnan(got) : same_bits(got, want));
      }
    return;
  }

  // Native DGEMM's classes (plain FP64 loop) and the exponents the scaling chose.
  std::vector<double> N = C0;
  ozdgemm::test::naive_gemm(ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, N.data(),
                            ldc);
  d::op_kind oa, ob;
  d::parse_op(ta, d::op_spelling::blas_char, &oa);
  d::parse_op(tb, d::op_spelling::blas_char, &ob);
  const d::gemm_problem p{m, n, k, d::operand_a(oa, A.data(), lda), d::operand_b(ob, B.data(), ldb),
                          N.data() /* not read by the scaling */, ldc};
  const d::scaling_result sc = d::reference_scaling(
      p, o.num_moduli, o.scaling == OZDGEMM_SCALING_FAST ? d::scaling_mode::fast
                                                         : d::scaling_mode::accurate);
  const mpq_class u = pow2(-53), tiny_unit = pow2(-1074), big = pow2(1023);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      const double got = C[j * ldc + i], c0 = C0[j * ldc + i], native = N[j * ldc + i];
      const bool uses_c0 = beta != 0.0;
      const bool special_in = (sc.flags_a[i] | sc.flags_b[j]) != 0 || !std::isfinite(alpha) ||
                              !std::isfinite(beta) || (uses_c0 && !std::isfinite(c0));
      if (special_in) {
        // Non-finite inputs in play: the output is non-finite; NaN where native gives NaN.
        // (With only the row/column special, the class is native's exactly.)
        FUZZ_EXPECT(!std::isfinite(got));
        if ((sc.flags_a[i] | sc.flags_b[j]) != 0 && std::isfinite(alpha) && std::isfinite(beta) &&
            (!uses_c0 || std::isfinite(c0))) {
          if (std::strcmp(fp_class(got), fp_class(native)) != 0) {
            std::fprintf(stderr, "(%lld,%lld) got %g native %g\n", (long long)i, (long long)j, got,
                         native);
            finding("class differs from native DGEMM");
          }
        } else if (std::isnan(native) && (std::isnan(alpha) || std::isnan(beta))) {
          FUZZ_EXPECT(std::isnan(got));
        }
        continue;
      }
      // Finite data: the exact value and the bound of accuracy_bound.hpp, all in rationals.
      mpq_class P = 0, abs_ab = 0, sum_a = 0, sum_b = 0;
      for (int64_t l = 0; l < k; ++l) {
        const mpq_class a = exact(p.a.at(i, l)), b = exact(p.b.at(j, l));
        P += a * b;
        abs_ab += abs(a * b);
        sum_a += abs(a);
        sum_b += abs(b);
      }
      const mpq_class al = exact(alpha), abs_al = abs(al);
      const mpq_class bc0 = uses_c0 ? exact(beta) * exact(c0) : mpq_class(0);
      const mpq_class E = al * P + bc0;
      const int ea = sc.exp_a[i], eb = sc.exp_b[j];
      const mpq_class T = sum_b * pow2(-ea) + sum_a * pow2(-eb) + mpq_class(k) * pow2(-(ea + eb));
      const mpq_class tiny = mpq_class(k + 4) * (abs_al + 1) * tiny_unit;
      if (!std::isfinite(got)) {
        // Only where some intermediate (the product, alpha times it, beta C0) may overflow.
        FUZZ_EXPECT(abs_ab + T >= big || abs_al * (abs_ab + T) >= big || abs(bc0) >= big);
        continue;
      }
      const mpq_class G = exact(got), abs_g = abs(G);
      mpq_class bound = abs_al * T + tiny + u * abs(E);
      if (!uses_c0)
        bound += 2 * u * (1 + pow2(-50)) * abs_g;
      else
        bound += u * abs_g + u * (1 + u) * abs_al * (abs_ab + T) + u * abs(bc0);
      if (abs(G - E) > bound) {
        std::fprintf(stderr, "(%lld,%lld) got %.17g exact %.17g |err| %.3g bound %.3g\n",
                     (long long)i, (long long)j, got, E.get_d(), mpq_class(abs(G - E)).get_d(),
                     bound.get_d());
        finding("error bound violated");
      }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  reader r(data, size);
  const uint8_t parts = r.u8();
  if (parts & 1) fuzz_argument_checks(r);
  if (parts & 2) fuzz_decision(r);
  if ((parts & 4) || (parts & 7) == 0) fuzz_reference(r);
  return 0;
}
