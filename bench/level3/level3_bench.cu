// A plain cuBLAS program timing one Level-3 routine, for runs with and without
// LD_PRELOAD=libozdgemm.so (bench/level3/run_level3.sh): it does not link the library.
//
//   level3_bench ROUTINE N K [REPS]
//
// ROUTINE: dsyrk, zherk, zsyrk, dsyr2k, zher2k (C n x n, depth K), dsymm, zhemm, dtrmm, dtrsm,
// ztrsm (side left, lower, no transpose: A of order N, B N x K; dtrsm-XYZ and ztrsm-XYZ choose
// side X = L or R, uplo Y = L or U, trans Z = N, T or C, B K x N on the right), and dgemm,
// zgemm (C N x N = A B, depth K: the native GEMM the other routines' rates are compared with).
// Data: uniform in [-0.5, 0.5) from a hash of the index; the triangular operand is well
// conditioned (off-diagonal entries divided by N, diagonal 2). Two untimed calls (the library
// learns each block shape's count), then REPS (default 5) calls timed with CUDA events. Prints
// one line:
//   routine=dsyrk n=16384 k=16384 median_ms=... min_ms=...
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

__global__ void fill(double* p, size_t count, uint32_t seed, double scale) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ (seed * 0x9e3779b9u);
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = (h * 0x1p-32 - 0.5) * scale;
  }
}

// Diagonal entries (real part: stride w doubles per element) of an order-n matrix set to 2.
__global__ void set_diagonal(double* p, int64_t n, int64_t ld, int w) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    p[(i + i * ld) * w] = 2.0;
}

#define CUDA_OK(x)                                                        \
  do {                                                                    \
    if ((x) != cudaSuccess) {                                             \
      std::fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(x)); \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

double* matrix(size_t doubles, uint32_t seed, double scale = 1.0) {
  double* p = nullptr;
  CUDA_OK(cudaMalloc(&p, doubles * sizeof(double)));
  fill<<<1024, 256>>>(p, doubles, seed, scale);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: level3_bench ROUTINE N K [REPS]\n");
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no GPU\n");
    return 77;
  }
  const std::string routine = argv[1];
  const int64_t n = std::atoll(argv[2]), k = std::atoll(argv[3]);
  const int reps = argc > 4 ? std::atoi(argv[4]) : 5;
  const bool complex = routine[0] == 'z';
  const int w = complex ? 2 : 1;
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
  const double one[2] = {1.0, 0.0}, half[2] = {0.5, 0.0};
  const auto* zone = reinterpret_cast<const cuDoubleComplex*>(one);
  const auto* zhalf = reinterpret_cast<const cuDoubleComplex*>(half);
  std::function<cublasStatus_t()> call;
  // C n x n from operands of n x k (GEMM's B taken k x n from the same buffer).
  const bool rank_k =
      routine.find("rk") != std::string::npos || routine.find("gemm") != std::string::npos;
  const size_t nn = static_cast<size_t>(n * n * w), nk = static_cast<size_t>(n * k * w);
  double* a = matrix(rank_k ? nk : nn, 1, routine.find("tr") != std::string::npos ? 1.0 / n : 1.0);
  double* b = matrix(nk, 2);
  double* c = matrix(rank_k ? nn : nk, 3);
  if (routine.find("tr") != std::string::npos) set_diagonal<<<64, 256>>>(a, n, n, w);
  auto* za = reinterpret_cast<cuDoubleComplex*>(a);
  auto* zb = reinterpret_cast<cuDoubleComplex*>(b);
  auto* zc = reinterpret_cast<cuDoubleComplex*>(c);
  const auto L = CUBLAS_FILL_MODE_LOWER;
  const auto N = CUBLAS_OP_N;
  // TRSM's flags from the suffix ("dtrsm-RUT"; none: left, lower, no transpose) and B's shape.
  const size_t dash = routine.find('-');
  const std::string base = routine.substr(0, dash);
  const std::string flags = dash == std::string::npos ? "LLN" : routine.substr(dash + 1) + "LLN";
  const auto side = flags[0] == 'R' ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT;
  const auto uplo = flags[1] == 'U' ? CUBLAS_FILL_MODE_UPPER : L;
  const auto trans = flags[2] == 'T' ? CUBLAS_OP_T : flags[2] == 'C' ? CUBLAS_OP_C : N;
  const int64_t rows = side == CUBLAS_SIDE_LEFT ? n : k, cols = side == CUBLAS_SIDE_LEFT ? k : n;
  if (routine == "dsyrk")
    call = [&] { return cublasDsyrk_v2_64(h, L, N, n, k, one, a, n, half, c, n); };
  else if (routine == "zherk")
    call = [&] { return cublasZherk_v2_64(h, L, N, n, k, one, za, n, half, zc, n); };
  else if (routine == "zsyrk")
    call = [&] { return cublasZsyrk_v2_64(h, L, N, n, k, zone, za, n, zhalf, zc, n); };
  else if (routine == "dsyr2k")
    call = [&] { return cublasDsyr2k_v2_64(h, L, N, n, k, one, a, n, b, n, half, c, n); };
  else if (routine == "zher2k")
    call = [&] { return cublasZher2k_v2_64(h, L, N, n, k, zone, za, n, zb, n, half, zc, n); };
  else if (routine == "dgemm")
    call = [&] { return cublasDgemm_v2_64(h, N, N, n, n, k, one, a, n, b, k, half, c, n); };
  else if (routine == "zgemm")
    call = [&] { return cublasZgemm_v2_64(h, N, N, n, n, k, zone, za, n, zb, k, zhalf, zc, n); };
  else if (routine == "dsymm")
    call = [&] {
      return cublasDsymm_v2_64(h, CUBLAS_SIDE_LEFT, L, n, k, one, a, n, b, n, half, c, n);
    };
  else if (routine == "zhemm")
    call = [&] {
      return cublasZhemm_v2_64(h, CUBLAS_SIDE_LEFT, L, n, k, zone, za, n, zb, n, zhalf, zc, n);
    };
  else if (routine == "dtrmm")
    call = [&] {
      return cublasDtrmm_v2_64(h, CUBLAS_SIDE_LEFT, L, N, CUBLAS_DIAG_NON_UNIT, n, k, one, a, n, b,
                               n, c, n);
    };
  else if (base == "dtrsm")  // in place on B: each call solves the previous call's result
    call = [&] {
      return cublasDtrsm_v2_64(h, side, uplo, trans, CUBLAS_DIAG_NON_UNIT, rows, cols, one, a, n, b,
                               rows);
    };
  else if (base == "ztrsm")
    call = [&] {
      return cublasZtrsm_v2_64(h, side, uplo, trans, CUBLAS_DIAG_NON_UNIT, rows, cols, zone, za, n,
                               zb, rows);
    };
  else {
    std::fprintf(stderr, "unknown routine %s\n", routine.c_str());
    return 2;
  }
  CUDA_OK(cudaDeviceSynchronize());
  for (int i = 0; i < 2; ++i)
    if (call() != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "%s failed\n", routine.c_str());
      return 1;
    }
  CUDA_OK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    cudaEventRecord(e0);
    call();
    cudaEventRecord(e1);
    CUDA_OK(cudaEventSynchronize(e1));
    float t = 0;
    cudaEventElapsedTime(&t, e0, e1);
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::printf("routine=%s n=%lld k=%lld median_ms=%.3f min_ms=%.3f\n", routine.c_str(),
              static_cast<long long>(n), static_cast<long long>(k), ms[ms.size() / 2], ms[0]);
  cublasDestroy(h);
  return 0;
}
