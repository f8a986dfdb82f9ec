#include "host_path/admission.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <set>

#include "common/error.hpp"
#include "common/logging.hpp"
#include "dispatch/device_select.hpp"
#include "dispatch/settings.hpp"
#include "engine/handle_context.hpp"

namespace ozdgemm::detail {
namespace {

// Doubles to bytes for the memory rule, saturating (a call that large is refused anyway).
size_t to_bytes(double x) {
  return x >= static_cast<double>(SIZE_MAX / 2) ? SIZE_MAX / 2 : static_cast<size_t>(x);
}

}  // namespace

host_worker* worker_set::at(int i, bool* out_of_memory) {
  slot& s = slots_[static_cast<size_t>(i)];
  std::call_once(s.once, [&] {
    const int device = device_of(i);
    try {
      device_guard guard(device);
      s.worker = new host_worker(i, device, threads_);
      if (count_ == 1)
        logger().info("host path on GPU {}: {} packing threads, {} MiB pinned staging", device,
                      s.worker->threads(), 4 * kStagingElements * sizeof(double) >> 20);
      else
        logger().info(
            "host path worker {} of {} on GPU {}: {} packing threads, {} MiB pinned "
            "staging",
            i, count_, device, s.worker->threads(), 4 * kStagingElements * sizeof(double) >> 20);
    } catch (const std::exception& e) {
      // Running out of memory is a state of the machine, not a fault: warn, not error.
      s.out_of_memory = is_allocation_failure(e);
      const spdlog::level::level_enum level =
          s.out_of_memory ? spdlog::level::warn : spdlog::level::err;
      if (count_ == 1)
        logger().log(level, "host path unavailable: {}", e.what());
      else
        logger().log(level, "host path worker {} on GPU {} unavailable: {}", i, device, e.what());
    }
  });
  *out_of_memory = s.out_of_memory;
  return s.worker;
}
// The workers, with OZDGEMM_HOST_THREADS (or its default for the GPUs listed) shared out.
worker_set& workers() {
  static worker_set* set = [] {
    const std::vector<int>& devices = host_devices().devices;
    const std::set<int> gpus(devices.begin(), devices.end());  // OZDGEMM_DEVICES=0,0 is one GPU
    const int threads = host_copy_threads(settings().host_threads, static_cast<int>(gpus.size()));
    // Leaked: see host_worker.
    return new worker_set(devices, settings().host_workers_per_device, threads);
  }();
  return *set;
}

std::vector<host_worker*> admit(worker_set& set, int wanted, const host_job& j, const char** why) {
  struct gpu_budget {
    int device;
    size_t free_bytes;
    double need, held;
  };
  std::vector<gpu_budget> gpus;
  std::vector<host_worker*> crew;
  *why = kNoWorkers;
  for (int i = 0; i < set.count() && static_cast<int>(crew.size()) < wanted; ++i) {
    bool out_of_memory = false;
    host_worker* w = set.at(i, &out_of_memory);
    if (w == nullptr) {
      if (crew.empty() && out_of_memory) *why = kNoMemoryForWorkers;
      continue;
    }
    auto it = std::find_if(gpus.begin(), gpus.end(),
                           [&](const gpu_budget& b) { return b.device == w->device(); });
    if (it == gpus.end()) {
      device_guard guard(w->device());
      size_t free_bytes = 0, total = 0;
      if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
        (void)cudaGetLastError();
        if (crew.empty()) *why = "device memory unknown";
        continue;
      }
      gpus.push_back({w->device(), free_bytes, 0.0, 0.0});
      it = gpus.end() - 1;
    }
    const double need = it->need + w->need_bytes(j), held = it->held + w->held_bytes();
    if (workspace_cap() != 0 && need > static_cast<double>(workspace_cap())) {
      if (crew.empty()) *why = "workspace cap";
      continue;
    }
    const unsigned sharers = memory_sharers();
    if (!within_free_memory(to_bytes(need), to_bytes(held), it->free_bytes, sharers)) {
      if (crew.empty())
        *why = sharers == 1 ? "device memory: host path over 90% of free"
                            : "device memory: host path over this process's share of free";
      continue;
    }
    it->need = need;
    it->held = held;
    crew.push_back(w);
  }
  return crew;
}

}  // namespace ozdgemm::detail
