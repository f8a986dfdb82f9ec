// Bad input on the GPU, case by case against native cuBLAS. Run under
// LD_PRELOAD=libozdgemm.so with OZDGEMM_MODE=emulate; each case goes four ways in one process:
//   native       the real cublasDgemm_v2 (dlsym in libcublas.so.13 itself),
//   intercepted  cublasDgemm_v2 as the program calls it (the library's hook),
//   C API        ozdgemm_dgemm (dlsym; s and scaling from OZDGEMM_MODULI / OZDGEMM_SCALING),
//   reference    ozdgemm_dgemm_reference on the host (same settings).
// Invalid arguments: intercepted status == native status, C API status maps to it
// (ozdgemm_status_to_cublas), C untouched (bitwise, padding included) by every path.
// Valid calls (NaN/Inf in A, B, C, alpha, beta; subnormals; overflow; zeros; long k; m = 1,
// n = 1; huge leading dimensions): intercepted and C API bitwise equal to the host reference
// (the library's invariant; NaN payloads aside), the class (NaN, +Inf, -Inf, finite) of every
// element equal to native's, finite elements within a bound of native's, padding of C untouched.
// Prints "N cases, M matched"; exits 77 (skip) without a GPU or without the library.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "certified_result.hpp"
#include "client_support.hpp"

namespace {

using dgemm_fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const double*, const double*, int, const double*, int,
                                    const double*, double*, int);

int order_dependent = 0;  // elements accepted by the overflow-order rule
api_fn oz_dgemm;
ref_fn oz_reference;
to_cublas_fn oz_to_cublas;
dgemm_fn native_dgemm;

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kAuto = -77777;

struct gcase {
  std::string name;
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  int m = 40, n = 33, k = 50;
  int lda = kAuto, ldb = kAuto, ldc = kAuto;  // kAuto: the minimum valid value
  double alpha = 1.0, beta = 0.5;
  std::function<void(struct mats&)> edit;
  bool null_handle = false;
};

struct mats {
  const gcase* g;
  std::vector<double> A, B, C;
  static bool tr(cublasOperation_t t) { return t != CUBLAS_OP_N; }
  double& a(int i, int l) {
    return tr(g->ta) ? A[size_t(i) * g->lda + l] : A[size_t(l) * g->lda + i];
  }
  double& b(int l, int j) {
    return tr(g->tb) ? B[size_t(l) * g->ldb + j] : B[size_t(j) * g->ldb + l];
  }
  double& c(int i, int j) { return C[size_t(j) * g->ldc + i]; }
};

double value(uint64_t i, uint64_t seed) {
  uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull + seed * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 31)) * 0x94d049bb133111ebull;
  z ^= z >> 29;
  const double u = (static_cast<double>(z >> 11) + 0.5) * 0x1.0p-53;
  return std::ldexp(u - 0.5, static_cast<int>(z % 8));
}

const char* fp_class(double x) {
  return std::isnan(x) ? "NaN" : std::isinf(x) ? (x > 0 ? "+Inf" : "-Inf") : "finite";
}

struct device_copy {
  double* p = nullptr;
  explicit device_copy(const std::vector<double>& h) {
    cudaMalloc(&p, h.size() * sizeof(double));
    cudaMemcpy(p, h.data(), h.size() * sizeof(double), cudaMemcpyHostToDevice);
  }
  ~device_copy() { cudaFree(p); }
  std::vector<double> get(size_t count) const {
    std::vector<double> h(count);
    cudaMemcpy(h.data(), p, count * sizeof(double), cudaMemcpyDeviceToHost);
    return h;
  }
};

bool same_bits(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * 8) == 0;
}

// Bit for bit, except that any two NaNs are equal: the GPU's canonical NaN and the host's
// default NaN differ in sign and payload (as in tests/gpu/bit_identity_test.cpp).
bool same_values(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!(std::isnan(x[i]) && std::isnan(y[i])) && std::memcmp(&x[i], &y[i], 8) != 0) return false;
  return true;
}

// Empty when the case matched.
std::string run_case(cublasHandle_t handle, gcase g) {
  const bool ta = mats::tr(g.ta), tb = mats::tr(g.tb);
  auto min_ld = [](int rows) { return rows > 1 ? rows : 1; };
  if (g.lda == kAuto) g.lda = min_ld(ta ? g.k : g.m);
  if (g.ldb == kAuto) g.ldb = min_ld(tb ? g.n : g.k);
  if (g.ldc == kAuto) g.ldc = min_ld(g.m);
  auto cols = [](int v) { return size_t(v > 0 ? v : 1); };
  mats x{&g, {}, {}, {}};
  x.A.resize(size_t(std::max(g.lda, 1)) * cols(ta ? g.m : g.k));
  x.B.resize(size_t(std::max(g.ldb, 1)) * cols(tb ? g.k : g.n));
  x.C.resize(size_t(std::max(g.ldc, 1)) * cols(g.n));
  for (size_t i = 0; i < x.A.size(); ++i) x.A[i] = value(i, 1);
  for (size_t i = 0; i < x.B.size(); ++i) x.B[i] = value(i, 2);
  for (size_t i = 0; i < x.C.size(); ++i) x.C[i] = value(i, 3);
  if (g.edit) g.edit(x);
  const device_copy dA(x.A), dB(x.B), dNative(x.C), dHook(x.C), dApi(x.C);
  cublasHandle_t h = g.null_handle ? nullptr : handle;
  const ozdgemm_options_t o = env_options();
  const cublasStatus_t s_native = native_dgemm(h, g.ta, g.tb, g.m, g.n, g.k, &g.alpha, dA.p, g.lda,
                                               dB.p, g.ldb, &g.beta, dNative.p, g.ldc);
  const cublasStatus_t s_hook = cublasDgemm(h, g.ta, g.tb, g.m, g.n, g.k, &g.alpha, dA.p, g.lda,
                                            dB.p, g.ldb, &g.beta, dHook.p, g.ldc);
  const ozdgemm_status_t s_api = oz_dgemm(h, g.ta, g.tb, g.m, g.n, g.k, &g.alpha, dA.p, g.lda,
                                          dB.p, g.ldb, &g.beta, dApi.p, g.ldc, o);
  if (cudaDeviceSynchronize() != cudaSuccess) return "CUDA error after the calls";
  const std::vector<double> Cn = dNative.get(x.C.size()), Ch = dHook.get(x.C.size()),
                            Ca = dApi.get(x.C.size());
  if (s_hook != s_native)
    return "intercepted status " + std::to_string(s_hook) + ", native " + std::to_string(s_native);
  if (oz_to_cublas(s_api) != s_native)
    return "C API status " + std::to_string(s_api) + ", native " + std::to_string(s_native);
  if (s_native != CUBLAS_STATUS_SUCCESS) {
    if (!same_bits(Cn, x.C)) return "native cuBLAS wrote C on an error";
    if (!same_bits(Ch, x.C)) return "intercepted call wrote C on an error";
    if (!same_bits(Ca, x.C)) return "C API wrote C on an error";
    return "";
  }
  const char cta = ta ? 'T' : 'N', ctb = tb ? 'T' : 'N';
  // Bit for bit one of the results a certified call may give (certified_result.hpp): the cases
  // share a few shapes, so a call may run the count other data taught its shape.
  const host_gemm_case hc{cta,   ctb,        g.m,   g.n,    g.k,  g.alpha, x.A.data(),
                          g.lda, x.B.data(), g.ldb, g.beta, &x.C, g.ldc};
  if (certified_result(oz_reference, o, hc, Cn, Ca, same_values).empty())
    return "C API differs from the host reference (bitwise)";
  if (certified_result(oz_reference, o, hc, Cn, Ch, same_values).empty())
    return "intercepted call differs from the host reference (bitwise)";
  for (int j = 0; j < g.n; ++j)
    for (int i = 0; i < g.ldc; ++i) {
      const size_t at = size_t(j) * g.ldc + i;
      if (i >= g.m) {
        if (std::memcmp(&Ca[at], &x.C[at], 8) != 0) return "padding of C written";
        continue;
      }
      const double v = Ca[at], r = Cn[at];
      // The exact result, without intermediate overflow (long double, alpha applied last).
      long double amax = 0, bmax = 0, abs_sum = 0, dot = 0;
      for (int l = 0; l < g.k; ++l) {
        const long double av = x.a(i, l), bv = x.b(l, j);
        dot += av * bv;
        amax = std::max(amax, std::fabs(av));
        bmax = std::max(bmax, std::fabs(bv));
        abs_sum += std::fabs(av * bv);
      }
      const long double ab = g.alpha == 0.0 ? 0.0L : static_cast<long double>(g.alpha) * dot;
      const long double exact =
          g.beta == 0.0 ? ab : ab + static_cast<long double>(g.beta) * x.C[at];
      if (std::strcmp(fp_class(v), fp_class(r)) != 0) {
        // Native's own evaluation order can overflow to +-Inf or NaN where the exact result is
        // finite or +-Inf; the library's class must then be the exact result's (counted apart).
        if (std::isfinite(r) || std::strcmp(fp_class(v), fp_class(static_cast<double>(exact))) != 0)
          return "(" + std::to_string(i) + "," + std::to_string(j) + "): " + fp_class(v) +
                 ", native " + fp_class(r);
        ++order_dependent;
      }
      if (!std::isfinite(v) || g.alpha == 0.0 || g.k == 0 || !std::isfinite(g.alpha)) continue;
      const long double tol =
          std::fabs(static_cast<long double>(g.alpha)) *
              (g.k * 0x1p-36L * amax * bmax + 4.0L * (g.k + 2) * DBL_EPSILON * abs_sum) +
          // beta == 0: C is not read (it may hold NaN), so it adds nothing to the bound.
          (g.beta == 0.0 ? 0.0L
                         : 4 * DBL_EPSILON * std::fabs(static_cast<long double>(g.beta) * x.C[at])) +
          (g.k + 4) * 4.0L * DBL_TRUE_MIN;
      if (!(std::fabs(static_cast<long double>(v) - exact) <= tol)) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "(%d,%d) = %.17g, exact %.17Lg, native %.17g, bound %Lg", i,
                      j, v, exact, r, tol);
        return buf;
      }
    }
  return "";
}

std::vector<gcase> all_cases() {
  std::vector<gcase> v;
  auto bad = [&](const char* name, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                 int lda, int ldb, int ldc) {
    gcase g;
    g.name = std::string("invalid: ") + name;
    g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k, g.lda = lda, g.ldb = ldb, g.ldc = ldc;
    v.push_back(g);
  };
  const auto N = CUBLAS_OP_N, T = CUBLAS_OP_T, C = CUBLAS_OP_C;
  const auto bad_op = static_cast<cublasOperation_t>(99);
  bad("m < 0", N, N, -1, 8, 8, 8, 8, 8);
  bad("n < 0", N, T, 8, -1, 8, 8, 8, 8);
  bad("k < 0", T, N, 8, 8, -1, 8, 8, 8);
  bad("m = INT_MIN", N, N, std::numeric_limits<int>::min(), 8, 8, 8, 8, 8);
  bad("lda < m", N, N, 8, 8, 8, 7, 8, 8);
  bad("lda < k (T)", T, N, 8, 8, 9, 8, 9, 8);
  bad("lda = 0, m = 0", N, N, 0, 8, 8, 0, 8, 1);
  bad("ldb < k", N, N, 8, 8, 9, 8, 8, 8);
  bad("ldb < n (C)", N, C, 8, 9, 8, 8, 8, 8);
  bad("ldc < m", N, N, 8, 8, 8, 8, 8, 7);
  bad("ldc < 0", N, N, 8, 8, 8, 8, 8, -8);
  bad("transa 99", bad_op, N, 8, 8, 8, 8, 8, 8);
  bad("transb 99", N, bad_op, 8, 8, 8, 8, 8, 8);
  bad("transa 99 and m < 0", bad_op, N, -1, 8, 8, 8, 8, 8);
  {
    gcase g;
    g.name = "invalid: null handle";
    g.null_handle = true;
    v.push_back(g);
  }
  auto val = [&](std::string name, std::function<void(mats&)> edit, double alpha = 1.0,
                 double beta = 0.5, cublasOperation_t ta = CUBLAS_OP_N,
                 cublasOperation_t tb = CUBLAS_OP_N) {
    gcase g;
    g.name = std::move(name);
    g.edit = std::move(edit);
    g.alpha = alpha, g.beta = beta, g.ta = ta, g.tb = tb;
    v.push_back(g);
  };
  const double specials[] = {kNaN, kInf, -kInf};
  const char* names[] = {"NaN", "+Inf", "-Inf"};
  for (int s = 0; s < 3; ++s) {
    const double z = specials[s];
    const std::string w = names[s];
    val(w + " in A", [z](mats& x) { x.a(3, 7) = z; });
    val(
        w + " in A (T)", [z](mats& x) { x.a(3, 7) = z; }, 1.0, 0.5, T, N);
    val(
        w + " in B (T)", [z](mats& x) { x.b(7, 5) = z; }, -2.0, 0.5, N, T);
    val(w + " in C, beta 0.5", [z](mats& x) { x.c(4, 4) = z; });
    val(
        w + " in C, beta 0", [z](mats& x) { x.c(4, 4) = z; }, 1.0, 0.0);
    val(
        w + " in A, alpha 0", [z](mats& x) { x.a(3, 7) = z; }, 0.0, 0.5);
    val(w + " in A times 0 in B", [z](mats& x) {
      x.a(0, 3) = z;
      x.b(3, 0) = 0.0;
    });
    val(
        w + " everywhere, alpha = beta = 0",
        [z](mats& x) {
          for (double& e : x.A) e = z;
          for (double& e : x.B) e = z;
          for (double& e : x.C) e = z;
        },
        0.0, 0.0);
    val("beta = " + w, nullptr, 1.0, z);
    val(
        "alpha = " + w + ", A, B > 0",
        [](mats& x) {
          for (double& e : x.A) e = std::fabs(e);
          for (double& e : x.B) e = std::fabs(e);
        },
        z, 0.0);
  }
  val("+Inf and -Inf in one dot", [](mats& x) {
    x.a(1, 1) = kInf;
    x.a(1, 2) = -kInf;
  });
  val(
      "NaN, Inf in A, B and C",
      [](mats& x) {
        x.a(0, 0) = kNaN;
        x.a(5, 9) = kInf;
        x.b(9, 2) = -kInf;
        x.c(7, 7) = kInf;
      },
      1.0, 1.0, T, T);
  val("subnormal A", [](mats& x) {
    for (double& e : x.A) e *= 0x1p-1060;
  });
  val("subnormal A and B", [](mats& x) {
    for (double& e : x.A) e *= 0x1p-1060;
    for (double& e : x.B) e *= 0x1p-1060;
  });
  val("subnormal C", [](mats& x) {
    for (double& e : x.C) e *= 0x1p-1070;
  });
  val(
      "row of DBL_MAX/2 -> +Inf",
      [](mats& x) {
        for (int l = 0; l < x.g->k; ++l) x.a(0, l) = DBL_MAX / 2, x.b(l, 0) = 1.0;
      },
      1.0, 0.0);
  val(
      "row of -DBL_MAX/2 -> -Inf",
      [](mats& x) {
        for (int l = 0; l < x.g->k; ++l) x.a(1, l) = -DBL_MAX / 2, x.b(l, 1) = 1.0;
      },
      1.0, 0.0);
  val("2^1000 x 2^1000", [](mats& x) {
    x.a(2, 3) = 0x1p1000;
    x.b(3, 2) = 0x1p1000;
  });
  val("products near 2^1000", [](mats& x) {
    for (int l = 0; l < x.g->k; ++l) x.a(3, l) *= 0x1p1000, x.b(l, 1) *= 0x1p-10;
  });
  val("all-zero A", [](mats& x) { std::fill(x.A.begin(), x.A.end(), 0.0); });
  val(
      "all zero",
      [](mats& x) {
        std::fill(x.A.begin(), x.A.end(), 0.0);
        std::fill(x.B.begin(), x.B.end(), -0.0);
        std::fill(x.C.begin(), x.C.end(), 0.0);
      },
      1.0, 1.0);
  val("alpha = 0, beta = 0", nullptr, 0.0, 0.0);
  auto shape = [&](std::string name, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                   int k, int lda = kAuto, int ldb = kAuto, int ldc = kAuto) {
    gcase g;
    g.name = "shape: " + name;
    g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k, g.lda = lda, g.ldb = ldb, g.ldc = ldc;
    g.alpha = 1.25, g.beta = -0.5;
    v.push_back(g);
  };
  shape("k = 2^18, m = 2, n = 3", N, N, 2, 3, 1 << 18);
  shape("k = 2^18, m = 3, n = 2 (TT)", T, T, 3, 2, 1 << 18);
  shape("k = 2^20, m = 2, n = 2", T, N, 2, 2, 1 << 20);
  shape("k = 2^20, m = n = 1", N, T, 1, 1, 1 << 20);
  shape("m = 1", N, N, 1, 70, 90);
  shape("n = 1", T, N, 70, 1, 90);
  shape("m = n = k = 1", N, N, 1, 1, 1);
  shape("k = 1", N, T, 60, 50, 1);
  shape("lda far larger", N, N, 30, 40, 50, 5000);
  shape("ldb far larger (T)", N, T, 30, 40, 50, kAuto, 4097);
  shape("ldc far larger", T, N, 30, 40, 50, kAuto, kAuto, 3001);
  return v;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  oz_dgemm = preloaded_symbol<api_fn>("ozdgemm_dgemm");
  oz_reference = preloaded_symbol<ref_fn>("ozdgemm_dgemm_reference");
  oz_to_cublas = preloaded_symbol<to_cublas_fn>("ozdgemm_status_to_cublas");
  void* lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
  native_dgemm = lib ? reinterpret_cast<dgemm_fn>(dlsym(lib, "cublasDgemm_v2")) : nullptr;
  if (!oz_dgemm || !oz_reference || !oz_to_cublas || !native_dgemm) {
    std::puts("libozdgemm.so not preloaded (or cuBLAS not found): skipped");
    return 77;
  }
  const char* mode = std::getenv("OZDGEMM_MODE");
  if (mode == nullptr || std::strcmp(mode, "emulate") != 0) {
    std::puts("run with OZDGEMM_MODE=emulate (the intercepted path must emulate)");
    return 2;
  }
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
  const std::vector<gcase> cases = all_cases();
  int matched = 0;
  for (const gcase& g : cases) {
    const std::string why = run_case(handle, g);
    std::printf("%s %s%s%s\n", why.empty() ? "ok  " : "FAIL", g.name.c_str(),
                why.empty() ? "" : ": ", why.c_str());
    matched += why.empty();
  }
  cublasDestroy(handle);
  std::printf(
      "bad input (GPU: C API and intercepted cublasDgemm vs native): %zu cases, %d "
      "matched (%d elements with the exact class where native's order overflows)\n",
      cases.size(), matched, order_dependent);
  return matched == static_cast<int>(cases.size()) ? 0 : 1;
}
