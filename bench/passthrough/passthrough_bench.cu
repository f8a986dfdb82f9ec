// The cost of an intercepted call that goes native: a plain cuBLAS program (it links cuBLAS,
// not the library) that times `calls` cublasDgemm calls of n^3 on one stream, enqueued back to
// back, from the first enqueue to the stream's end. Run it directly and under
// LD_PRELOAD=libozdgemm.so (bench/passthrough/run_passthrough.sh): the difference per call is what
// the interception's decision adds to a call it leaves native.
//
//   passthrough_bench [--n 64] [--calls 100000] [--warmup 2000]
//
// Prints one line: n, calls, microseconds per call end to end and for the enqueue alone.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "passthrough_bench: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 64, calls = 100000, warmup = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--n") == 0) n = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--calls") == 0) calls = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--warmup") == 0) warmup = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "passthrough_bench: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "passthrough_bench: no GPU\n");
    return 77;
  }
  const size_t elems = static_cast<size_t>(n) * n;
  std::vector<double> host(elems);
  for (size_t i = 0; i < elems; ++i) host[i] = 0.25 + static_cast<double>(i % 97) / 97.0;
  double *a = nullptr, *b = nullptr, *c = nullptr;
  cudaStream_t stream;
  if (!cuda_ok(cudaMalloc(&a, elems * 8), "malloc") || !cuda_ok(cudaMalloc(&b, elems * 8), "malloc") ||
      !cuda_ok(cudaMalloc(&c, elems * 8), "malloc") ||
      !cuda_ok(cudaMemcpy(a, host.data(), elems * 8, cudaMemcpyHostToDevice), "copy") ||
      !cuda_ok(cudaMemcpy(b, host.data(), elems * 8, cudaMemcpyHostToDevice), "copy") ||
      !cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream"))
    return 1;
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetStream(h, stream) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "passthrough_bench: cuBLAS handle\n");
    return 1;
  }
  const double one = 1.0, zero = 0.0;
  auto run = [&](int count) {
    for (int i = 0; i < count; ++i)
      if (cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n) !=
          CUBLAS_STATUS_SUCCESS)
        return false;
    return true;
  };
  if (!run(warmup) || !cuda_ok(cudaStreamSynchronize(stream), "warm-up")) return 1;
  const auto t0 = std::chrono::steady_clock::now();
  if (!run(calls)) {
    std::fprintf(stderr, "passthrough_bench: cublasDgemm failed\n");
    return 1;
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (!cuda_ok(cudaStreamSynchronize(stream), "sync")) return 1;
  const auto t2 = std::chrono::steady_clock::now();
  const double total_us = std::chrono::duration<double, std::micro>(t2 - t0).count();
  const double enqueue_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
  std::printf("n=%d calls=%d us_per_call=%.3f enqueue_us_per_call=%.3f\n", n, calls,
              total_us / calls, enqueue_us / calls);
  cublasDestroy(h);
  cudaStreamDestroy(stream);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}
