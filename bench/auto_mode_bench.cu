// Auto mode against native, side by side in one process: run under
// LD_PRELOAD=libozdgemm.so with OZDGEMM_MODE=auto. For each shape it times the real
// cublasDgemm_v2 (looked up in libcublas itself) and the interposed one (the process-wide
// definition, i.e. the library's decision) in three interleaved rounds, with CUDA events;
// each time is the median of its round, each column the median round. Prints one CSV row
// per shape: shape, native ms, auto ms, auto/native, and the native spread over the rounds.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using dgemm_fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const double*, const double*, int, const double*, int,
                                    const double*, double*, int);

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

double median_ms(cublasHandle_t h, cudaStream_t s, dgemm_fn f, int m, int n, int k, double* a,
                 double* b, double* c, int reps) {
  const double one = 1.0, zero = 0.0;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> t;
  for (int r = 0; r < reps + 1; ++r) {
    cudaEventRecord(e0, s);
    CK(f(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, c, m));
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

}  // namespace

int main(int argc, char** argv) {
  void* cublas = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (cublas == nullptr) cublas = dlopen("libcublas.so.13", RTLD_NOW);
  auto native = reinterpret_cast<dgemm_fn>(dlsym(cublas, "cublasDgemm_v2"));
  auto routed = reinterpret_cast<dgemm_fn>(dlsym(RTLD_DEFAULT, "cublasDgemm_v2"));
  if (native == nullptr || routed == nullptr) return 1;
  std::printf("# interposed: %s\n", native == routed ? "no (not preloaded)" : "yes");
  std::vector<std::vector<int>> shapes;
  for (int n = 16; n <= 16384; n *= 2) shapes.push_back({n, n, n});
  const std::vector<std::vector<int>> odd = {{16384, 64, 16384}, {64, 16384, 16384},
                                             {16384, 16384, 64}, {16384, 16384, 256},
                                             {8192, 8192, 1024}, {256, 256, 65536},
                                             {4096, 4096, 16384}, {16384, 16384, 4096}};
  shapes.insert(shapes.end(), odd.begin(), odd.end());
  if (argc > 1 && std::string(argv[1]) == "--quick") shapes.resize(6);
  size_t max_a = 0, max_b = 0, max_c = 0;
  for (auto& s : shapes) {
    max_a = std::max(max_a, size_t(s[0]) * s[2]);
    max_b = std::max(max_b, size_t(s[2]) * s[1]);
    max_c = std::max(max_c, size_t(s[0]) * s[1]);
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
  std::printf("m,n,k,native_ms,auto_ms,auto_over_native,native_min_round_ms,native_max_round_ms\n");
  for (auto& sh : shapes) {
    const double work = 2.0 * sh[0] * sh[1] * sh[2];
    const int reps = work > 1e12 ? 5 : work > 1e10 ? 20 : 50;
    // Three interleaved rounds (native, auto, native, auto, ...): clock drift between the two
    // paths shows as spread between rounds rather than as a bias of one path.
    std::vector<double> tn, ta;
    for (int round = 0; round < 3; ++round) {
      tn.push_back(median_ms(h, s, native, sh[0], sh[1], sh[2], a, b, c, reps));
      ta.push_back(median_ms(h, s, routed, sh[0], sh[1], sh[2], a, b, c, reps));
    }
    std::sort(tn.begin(), tn.end());
    std::sort(ta.begin(), ta.end());
    std::printf("%d,%d,%d,%.4f,%.4f,%.3f,%.4f,%.4f\n", sh[0], sh[1], sh[2], tn[1], ta[1],
                ta[1] / tn[1], tn[0], tn[2]);
    std::fflush(stdout);
  }
  cublasDestroy(h);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}
