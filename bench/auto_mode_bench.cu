// Auto mode against native, side by side in one process: run under
// LD_PRELOAD=libozdgemm.so with OZDGEMM_MODE=auto. For each shape it times the real routine
// (looked up in libcublas itself) and the interposed one (the process-wide definition, i.e. the
// library's decision) in interleaved rounds (3 unless --rounds says), with CUDA events; each time
// is the median of its round, each column the median round. Prints one CSV row per shape: shape,
// native ms, auto ms, auto/native, and the native spread over the rounds.
//
//   auto_mode_bench [--routine dgemm|zgemm|zgemm3m] [--quick] [--rounds N (odd)]
//
// dgemm: cublasDgemm_v2 (the default); zgemm: cublasZgemm_v2; zgemm3m: cublasZgemm3m (whose
// native time auto mode compares with).
#include <cuComplex.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

using dgemm_fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const double*, const double*, int, const double*, int,
                                    const double*, double*, int);
using zgemm_fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const cuDoubleComplex*, const cuDoubleComplex*, int,
                                    const cuDoubleComplex*, int, const cuDoubleComplex*,
                                    cuDoubleComplex*, int);
// One GEMM of m x n x k on the operands, through the native or the interposed symbol.
using gemm_call = std::function<cublasStatus_t(bool interposed, int m, int n, int k)>;

#define CK(call)                                                              \
  do {                                                                        \
    if ((call) != 0) {                                                        \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call); \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

__global__ void fill(double* x, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned long long z = (i + 1) * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    x[i] = static_cast<double>(z >> 11) * 0x1.0p-53 - 0.5;
  }
}

double median_ms(cudaStream_t s, const gemm_call& gemm, bool interposed, int m, int n, int k,
                 int reps) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> t;
  for (int r = 0; r < reps + 1; ++r) {
    cudaEventRecord(e0, s);
    CK(gemm(interposed, m, n, k));
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (r > 0) t.push_back(ms);  // the first call is warm-up
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The native definition in libcublas and the process-wide one (the library's, when preloaded).
template <class Fn>
void symbols(void* cublas, const char* name, Fn& native, Fn& routed) {
  native = reinterpret_cast<Fn>(dlsym(cublas, name));
  routed = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
  if (native == nullptr || routed == nullptr) {
    std::fprintf(stderr, "auto_mode_bench: %s not found\n", name);
    std::exit(1);
  }
  std::printf("# %s interposed: %s\n", name, native == routed ? "no (not preloaded)" : "yes");
}

}  // namespace

int main(int argc, char** argv) {
  std::string routine = "dgemm";
  bool quick = false;
  int rounds = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--routine" && i + 1 < argc) {
      routine = argv[++i];
    } else if (a == "--rounds" && i + 1 < argc && std::atoi(argv[i + 1]) % 2 == 1) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: auto_mode_bench [--routine dgemm|zgemm|zgemm3m] [--quick] "
                   "[--rounds N (odd)]\n");
      return 2;
    }
  }
  if (routine != "dgemm" && routine != "zgemm" && routine != "zgemm3m") {
    std::fprintf(stderr, "auto_mode_bench: unknown routine %s\n", routine.c_str());
    return 2;
  }
  const bool complex = routine != "dgemm";
  const size_t words = complex ? 2 : 1;  // doubles per element

  void* cublas = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (cublas == nullptr) cublas = dlopen("libcublas.so.13", RTLD_NOW);
  if (cublas == nullptr) return 1;
  std::vector<std::vector<int>> shapes;
  for (int n = 16; n <= 16384; n *= 2) shapes.push_back({n, n, n});
  const std::vector<std::vector<int>> odd = {{16384, 64, 16384}, {64, 16384, 16384},
                                             {16384, 16384, 64}, {16384, 16384, 256},
                                             {8192, 8192, 1024}, {256, 256, 65536},
                                             {4096, 4096, 16384}, {16384, 16384, 4096}};
  shapes.insert(shapes.end(), odd.begin(), odd.end());
  if (quick) shapes.resize(6);
  size_t max_a = 0, max_b = 0, max_c = 0;
  for (auto& s : shapes) {
    max_a = std::max(max_a, size_t(s[0]) * s[2] * words);
    max_b = std::max(max_b, size_t(s[2]) * s[1] * words);
    max_c = std::max(max_c, size_t(s[0]) * s[1] * words);
  }
  double *a, *b, *c;
  CK(cudaMalloc(&a, max_a * 8));
  CK(cudaMalloc(&b, max_b * 8));
  CK(cudaMalloc(&c, max_c * 8));
  fill<<<1024, 256>>>(a, max_a, 1);
  fill<<<1024, 256>>>(b, max_b, 2);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetStream(h, s);

  gemm_call gemm;
  if (!complex) {
    dgemm_fn native, routed;
    symbols(cublas, "cublasDgemm_v2", native, routed);
    gemm = [=](bool interposed, int m, int n, int k) {
      const double one = 1.0, zero = 0.0;
      return (interposed ? routed : native)(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k,
                                            &zero, c, m);
    };
  } else {
    zgemm_fn native, routed;
    symbols(cublas, routine == "zgemm" ? "cublasZgemm_v2" : "cublasZgemm3m", native, routed);
    auto za = reinterpret_cast<cuDoubleComplex*>(a), zb = reinterpret_cast<cuDoubleComplex*>(b),
         zc = reinterpret_cast<cuDoubleComplex*>(c);
    gemm = [=](bool interposed, int m, int n, int k) {
      const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0);
      const cuDoubleComplex zero = make_cuDoubleComplex(0.0, 0.0);
      return (interposed ? routed : native)(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, za, m, zb,
                                            k, &zero, zc, m);
    };
  }

  std::printf("m,n,k,native_ms,auto_ms,auto_over_native,native_min_round_ms,native_max_round_ms\n");
  for (auto& sh : shapes) {
    // Real flops of the call: a complex product is four real ones.
    const double work = 2.0 * sh[0] * sh[1] * sh[2] * (complex ? 4 : 1);
    const int reps = work > 1e12 ? 5 : work > 1e10 ? 20 : 50;
    // Interleaved rounds (native, auto, native, auto, ...): clock drift between the two paths
    // shows as spread between rounds rather than as a bias of one path.
    std::vector<double> tn, ta;
    for (int round = 0; round < rounds; ++round) {
      tn.push_back(median_ms(s, gemm, false, sh[0], sh[1], sh[2], reps));
      ta.push_back(median_ms(s, gemm, true, sh[0], sh[1], sh[2], reps));
    }
    std::sort(tn.begin(), tn.end());
    std::sort(ta.begin(), ta.end());
    const int mid = rounds / 2;
    std::printf("%d,%d,%d,%.4f,%.4f,%.3f,%.4f,%.4f\n", sh[0], sh[1], sh[2], tn[mid], ta[mid],
                ta[mid] / tn[mid], tn.front(), tn.back());
    std::fflush(stdout);
  }
  cublasDestroy(h);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}
