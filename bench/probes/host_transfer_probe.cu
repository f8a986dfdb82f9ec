// What limits the host path: host copy bandwidth (pageable <-> pinned, plain memcpy and
// non-temporal stores, 1..N threads), page-locking cost (cudaHostRegister), and PCIe
// bandwidth (pinned, registered and pageable). One run prints one table; the host path's
// design choices (threads, staging, stores) cite it.
//   host_transfer_probe [MiB, default 1024]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "common/stream_copy.hpp"

namespace {

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best of three.
double best(const std::function<void()>& f) {
  double b = 1e30;
  for (int i = 0; i < 3; ++i) b = std::min(b, seconds_of(f));
  return b;
}

void parallel_copy(double* dst, const double* src, size_t n, int threads, bool nt) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([=] {
      const size_t lo = n * t / threads, hi = n * (t + 1) / threads;
      if (nt) {
        ozdgemm::detail::copy_run(dst + lo, src + lo, static_cast<int64_t>(hi - lo));
        ozdgemm::detail::store_fence();
      } else {
        std::memcpy(dst + lo, src + lo, (hi - lo) * sizeof(double));
      }
    });
  for (auto& th : pool) th.join();
}

}  // namespace

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1024;
  const size_t bytes = mib << 20, n = bytes / sizeof(double);
  const double gb = bytes / 1e9;
  std::vector<double> pageable(n, 1.0), pageable2(n, 2.0);
  double* pinned = nullptr;
  double* dev = nullptr;
  if (cudaMallocHost(&pinned, bytes) != cudaSuccess || cudaMalloc(&dev, bytes) != cudaSuccess) {
    std::printf("allocation failed\n");
    return 1;
  }
  std::memset(pinned, 0, bytes);
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  std::printf("buffer %zu MiB, %d hardware threads\n", mib, hw);
  std::printf("%-44s %8s\n", "host copy", "GB/s");
  for (int threads : {1, 2, 4, 8, 16, 32}) {
    if (threads > 2 * hw) break;
    for (bool nt : {false, true}) {
      const double pack = best([&] { parallel_copy(pinned, pageable.data(), n, threads, nt); });
      const double unpack = best([&] { parallel_copy(pageable2.data(), pinned, n, threads, nt); });
      std::printf("pageable->pinned %-9s %2d threads            %8.1f\n", nt ? "stream" : "memcpy",
                  threads, gb / pack);
      std::printf("pinned->pageable %-9s %2d threads            %8.1f\n", nt ? "stream" : "memcpy",
                  threads, gb / unpack);
    }
  }
  const double h2d = best([&] { cudaMemcpy(dev, pinned, bytes, cudaMemcpyHostToDevice); });
  const double d2h = best([&] { cudaMemcpy(pinned, dev, bytes, cudaMemcpyDeviceToHost); });
  const double h2d_pageable =
      best([&] { cudaMemcpy(dev, pageable.data(), bytes, cudaMemcpyHostToDevice); });
  const double d2h_pageable =
      best([&] { cudaMemcpy(pageable2.data(), dev, bytes, cudaMemcpyDeviceToHost); });
  std::printf("H2D pinned                                    %8.1f\n", gb / h2d);
  std::printf("D2H pinned                                    %8.1f\n", gb / d2h);
  std::printf("H2D pageable (driver staging)                 %8.1f\n", gb / h2d_pageable);
  std::printf("D2H pageable (driver staging)                 %8.1f\n", gb / d2h_pageable);
  double reg = 0, unreg = 0, h2d_reg = 0;
  for (int i = 0; i < 3; ++i) {
    reg += seconds_of([&] { cudaHostRegister(pageable.data(), bytes, cudaHostRegisterDefault); });
    h2d_reg += seconds_of([&] { cudaMemcpy(dev, pageable.data(), bytes, cudaMemcpyHostToDevice); });
    unreg += seconds_of([&] { cudaHostUnregister(pageable.data()); });
  }
  std::printf("cudaHostRegister (GB of memory per s)         %8.1f\n", 3 * gb / reg);
  std::printf("cudaHostUnregister (GB per s)                 %8.1f\n", 3 * gb / unreg);
  std::printf("H2D from registered pageable                  %8.1f\n", 3 * gb / h2d_reg);
  cudaFreeHost(pinned);
  cudaFree(dev);
  return 0;
}
