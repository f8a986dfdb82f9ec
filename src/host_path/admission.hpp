// Which of the host path's workers may run a call: the workers are created on first use (one
// per listed GPU and share, never again after a failed creation), and a call takes the first
// ones whose buffers fit the memory rules of device calls on their GPU.
#pragma once

#include <mutex>
#include <vector>

#include "host_path/worker.hpp"

namespace ozdgemm::detail {

// The workers: host_devices() x OZDGEMM_HOST_WORKERS_PER_DEVICE, GPU-major within a slot
// (worker i is on GPU devices[i mod D]), so that the first workers, those a narrow or
// memory-bound call uses, are on different GPUs. Each is created on first use and kept.
class worker_set {
 public:
  worker_set(const std::vector<int>& devices, int per_device, int threads)
      : devices_(devices),
        count_(static_cast<int>(devices.size()) * per_device),
        threads_(std::max(1, threads / std::max(1, count_))),
        slots_(count_) {}

  int count() const { return count_; }
  int device_of(int i) const { return devices_[static_cast<size_t>(i) % devices_.size()]; }

  // Worker i, or nullptr when it could not be created (logged once; *out_of_memory says
  // whether that was for want of memory). Not tried again: a run (bench/results/mpi/README.md) that
  // re-tried a creation that had run out of memory once a second, with 8 processes sharing 8 GiB,
  // had the applications' own cuBLAS calls fail in 4 of 8 processes, against none without re-trying
  // (bench/results/mpi/README.md): the attempts take memory the others need.
  host_worker* at(int i, bool* out_of_memory);

 private:
  struct slot {
    std::once_flag once;
    host_worker* worker = nullptr;
    bool out_of_memory = false;  // why worker is null, when it is
  };
  std::vector<int> devices_;
  int count_;
  int threads_;
  std::vector<slot> slots_;
};

// The process's workers, with OZDGEMM_HOST_THREADS (or its default for the GPUs listed)
// shared out. Created on the first host call that wants the GPU; never destroyed.
worker_set& workers();

// admit()'s reasons when no worker exists (creation failed; for want of memory): the call
// then counts as a fallback, not as a native decision.
inline constexpr const char* kNoWorkers = "host path unavailable";
inline constexpr const char* kNoMemoryForWorkers = "host path unavailable: out of device memory";

// The workers that may run `j`: the first `wanted` of the set whose buffers fit the rules of
// device calls on their GPU, all of one GPU's workers together (engine/handle_context.hpp):
// OZDGEMM_MAX_WORKSPACE, and 90% of the free memory divided by the processes sharing the GPU
// (memory_sharers()), so that ranks sharing a GPU do not starve each other. Empty with *why set
// when none fits.
std::vector<host_worker*> admit(worker_set& set, int wanted, const host_job& j, const char** why);

}  // namespace ozdgemm::detail
