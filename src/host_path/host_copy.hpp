// Multi-threaded copies between a caller's column-major host matrix (any leading dimension)
// and a dense column-major buffer (pinned staging), for the host path. One thread copies at
// about 5-10 GB/s from pageable memory, well below PCIe; several threads keep the transfers,
// not the packing, the limit.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ozdgemm::detail {

// A rows x cols block of a column-major host matrix: element (i, j) is at base[i + j * ld].
struct host_block {
  const double* base;
  int64_t ld;
  int64_t rows, cols;
};

// A fixed set of worker threads that run one parallel loop at a time. Created on first use of
// the host path, never at load time. The caller's thread takes part in every loop.
class copy_pool {
 public:
  explicit copy_pool(int threads);  // threads >= 1, the caller's included
  ~copy_pool();
  copy_pool(const copy_pool&) = delete;
  copy_pool& operator=(const copy_pool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs body(part) for part in [0, parts) spread over the threads; returns when all are done.
  void run(int parts, const std::function<void(int)>& body);

 private:
  void worker(int index);

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* body_ = nullptr;
  int parts_ = 0;
  int next_ = 0;       // next part to hand out
  int finished_ = 0;   // parts completed in this loop
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// Dense elements [first, first + count) of `src` in column-major order (index i + j * rows)
// are copied to dst[0, count). Packing for an upload.
void pack_range(copy_pool& pool, const host_block& src, int64_t first, int64_t count, double* dst);

// The inverse: dst's elements [first, first + count), in the same order, are taken from
// src[0, count). `dst.base` is written (it names the caller's output matrix).
void unpack_range(copy_pool& pool, const double* src, const host_block& dst, int64_t first,
                  int64_t count);

// Threads for the host path, all workers together: OZDGEMM_HOST_THREADS if valid, else
// min(hardware threads, 16 x the GPUs the host path uses). One GPU's pipeline is host-copy
// bound with 16 (bench/results/probes/README.md), and with two GPUs the
// copies, not the GPUs, bound the call: 32 threads rather than 16 took 0.90 to 0.82 s at
// n = 32768 on two H200s (bench/results/multi_gpu/README.md).
int host_copy_threads(int configured, int gpus);

}  // namespace ozdgemm::detail
