// The cost of an intercepted call that goes native: a plain cuBLAS program (it links cuBLAS,
// not the library) that times `calls` cublasDgemm calls of n^3 on one stream. Run it directly and
// under LD_PRELOAD=libozdgemm.so (bench/passthrough/run_passthrough.sh): the difference per call is
// what the interception's decision adds to a call it leaves native. Two timings:
//   end to end  the calls enqueued back to back, from the first enqueue to the stream's end
//               (bound by the GPU when one call runs longer than its enqueue);
//   host        the same calls in batches of `batch`, each enqueued behind a kernel that keeps the
//               stream busy for longer than the batch takes to enqueue: the enqueue time alone,
//               the host's cost of a call, cuBLAS's own included.
//
//   passthrough_bench [--n 64] [--calls 100000] [--warmup 2000] [--batch 1000]
//
// Prints one line: n, calls, microseconds per call end to end, and per call on the host.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// Keeps its stream busy for `cycles` SM clock cycles.
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "passthrough_bench: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 64, calls = 100000, warmup = 2000, batch = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--n") == 0)
      n = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--calls") == 0)
      calls = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--warmup") == 0)
      warmup = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--batch") == 0)
      batch = std::atoi(argv[i + 1]);
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
  if (!cuda_ok(cudaMalloc(&a, elems * 8), "malloc") ||
      !cuda_ok(cudaMalloc(&b, elems * 8), "malloc") ||
      !cuda_ok(cudaMalloc(&c, elems * 8), "malloc") ||
      !cuda_ok(cudaMemcpy(a, host.data(), elems * 8, cudaMemcpyHostToDevice), "copy") ||
      !cuda_ok(cudaMemcpy(b, host.data(), elems * 8, cudaMemcpyHostToDevice), "copy") ||
      !cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream"))
    return 1;
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS ||
      cublasSetStream(h, stream) != CUBLAS_STATUS_SUCCESS) {
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
  if (!cuda_ok(cudaStreamSynchronize(stream), "sync")) return 1;
  const auto t2 = std::chrono::steady_clock::now();
  const double total_us = std::chrono::duration<double, std::micro>(t2 - t0).count();
  // Host: each batch behind a spin of 50 ms (the batch's enqueue takes far less: 1000 calls at
  // tens of microseconds), so no enqueue waits for the GPU.
  int clock_khz = 0;
  if (!cuda_ok(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), "clock rate")) return 1;
  const long long spin_cycles = static_cast<long long>(clock_khz) * 50;
  double host_us = 0.0;
  int host_calls = 0;
  while (host_calls < calls) {
    const int count = calls - host_calls < batch ? calls - host_calls : batch;
    spin<<<1, 1, 0, stream>>>(spin_cycles);
    if (!cuda_ok(cudaGetLastError(), "spin")) return 1;
    const auto b0 = std::chrono::steady_clock::now();
    if (!run(count)) return 1;
    const auto b1 = std::chrono::steady_clock::now();
    if (!cuda_ok(cudaStreamSynchronize(stream), "sync")) return 1;
    host_us += std::chrono::duration<double, std::micro>(b1 - b0).count();
    host_calls += count;
  }
  std::printf("n=%d calls=%d us_per_call=%.3f host_us_per_call=%.3f\n", n, calls, total_us / calls,
              host_us / host_calls);
  cublasDestroy(h);
  cudaStreamDestroy(stream);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}
