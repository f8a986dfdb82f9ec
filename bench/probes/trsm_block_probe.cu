// Why a TRSM split into emulated GEMM updates did not gain: the diagonal blocks. Per order n
// (64 .. 8192) with 16384 right-hand sides (left, lower, no transpose): cublasDtrsm on the
// whole block, the same split by columns over 2 and 4 streams, the native DGEMM of one
// halving's update (n/2 x 16384 x n/2), and at n <= 64 the library's substitution kernel
// (kernels/small_trsm.cuh). CUDA events, median of 5 after one warm-up.
//   trsm_block_probe [nrhs, default 16384]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "common/bench_cuda.hpp"
#include "small_trsm.cuh"

namespace {

namespace bench = ozdgemm::bench;

// A well-conditioned lower triangle (diagonal 2, the rest of order 1/n) and a right-hand side.
__global__ void fill(double* a, int64_t n, double* b, int64_t nb) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n * n;
       e += step)
    a[e] = e % n == e / n ? 2.0 : ((e * 2654435761ull) % 1000) / (1000.0 * n);
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < nb; e += step)
    b[e] = ((e * 40503ull) % 997) / 997.0 - 0.5;
}

// Median ms of `run` on streams[0] (which may fork to the others itself).
double time_ms(cudaStream_t stream, const std::function<void()>& run) {
  bench::event_pool ev(2);
  std::vector<double> t;
  for (int rep = 0; rep < 6; ++rep) {
    cudaEventRecord(ev[0], stream);
    run();
    cudaEventRecord(ev[1], stream);
    cudaEventSynchronize(ev[1]);
    if (rep > 0) t.push_back(bench::elapsed_ms(ev[0], ev[1]));
  }
  return bench::median(t);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t nrhs = argc > 1 ? std::atoll(argv[1]) : 16384;
  constexpr int kStreams = 4;
  cudaStream_t st[kStreams];
  cublasHandle_t h[kStreams];
  for (int i = 0; i < kStreams; ++i) {
    cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking);
    cublasCreate(&h[i]);
    cublasSetStream(h[i], st[i]);
  }
  bench::event_pool fork(1 + kStreams);
  std::printf("n,nrhs,trsm_ms,trsm_2_streams_ms,trsm_4_streams_ms,update_dgemm_ms,kernel_ms\n");
  for (const int64_t n : {64, 512, 1024, 2048, 4096, 8192}) {
    double *a = nullptr, *b = nullptr, *c = nullptr;
    if (cudaMalloc(&a, sizeof(double) * n * n) != cudaSuccess ||
        cudaMalloc(&b, sizeof(double) * n * nrhs) != cudaSuccess ||
        cudaMalloc(&c, sizeof(double) * n * nrhs) != cudaSuccess) {
      std::fprintf(stderr, "out of memory at n = %lld\n", static_cast<long long>(n));
      return 1;
    }
    fill<<<1024, 256, 0, st[0]>>>(a, n, b, n * nrhs);
    const double one = 1.0, minus_one = -1.0;
    // One solve over `parts` column blocks of B, block i on stream i, joined back on st[0].
    auto solve = [&](int parts) {
      const int64_t w = nrhs / parts;
      cudaEventRecord(fork[0], st[0]);
      for (int i = 1; i < parts; ++i) cudaStreamWaitEvent(st[i], fork[0]);
      for (int i = 0; i < parts; ++i)
        cublasDtrsm(h[i], CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                    CUBLAS_DIAG_NON_UNIT, n, i == parts - 1 ? nrhs - i * w : w, &one, a, n,
                    b + i * w * n, n);
      for (int i = 1; i < parts; ++i) {
        cudaEventRecord(fork[i], st[i]);
        cudaStreamWaitEvent(st[0], fork[i]);
      }
    };
    const double t1 = time_ms(st[0], [&] { solve(1); });
    const double t2 = time_ms(st[0], [&] { solve(2); });
    const double t4 = time_ms(st[0], [&] { solve(4); });
    const double tg = time_ms(st[0], [&] {
      cublasDgemm(h[0], CUBLAS_OP_N, CUBLAS_OP_N, n / 2, nrhs, n / 2, &minus_one, a + n / 2, n, b,
                  n, &one, c, n);
    });
    double tk = bench::kNaN;
    if (n <= ozdgemm::detail::small_trsm_order<double>()) {
      const ozdgemm::detail::small_trsm_args<double> x{true, true, false, false, false, n,
                                                       nrhs, 1.0,  a,     n,     b,     n};
      tk = time_ms(st[0], [&] { ozdgemm::detail::launch_small_trsm(x, st[0]); });
    }
    if (cudaDeviceSynchronize() != cudaSuccess) {
      std::fprintf(stderr, "a launch failed at n = %lld\n", static_cast<long long>(n));
      return 1;
    }
    std::printf("%lld,%lld,%.4f,%.4f,%.4f,%.4f,%.4f\n", static_cast<long long>(n),
                static_cast<long long>(nrhs), t1, t2, t4, tg, tk);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  return 0;
}
