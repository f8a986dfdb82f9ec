#include "interpose/device_select.hpp"

#include <cuda_runtime.h>

#include <cerrno>
#include <cstdlib>

#include "common/logging.hpp"
#include "interpose/config.hpp"

namespace ozdgemm::detail {
namespace {

// A rank is a non-negative decimal integer; anything else (empty, signs, trailing text,
// overflow) is not.
bool parse_rank(const char* s, long* out) {
  if (s == nullptr || *s < '0' || *s > '9') return false;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

}  // namespace

device_choice choose_device(int configured, const std::function<const char*(const char*)>& env,
                            int gpu_count) {
  device_choice c;
  if (configured >= 0) {
    c.device = configured;
    c.reason = "OZDGEMM_DEVICE=" + std::to_string(configured);
    return c;
  }
  for (const char* name : kLocalRankVariables) {
    const char* value = env(name);
    if (value == nullptr) continue;
    long rank = 0;
    if (!parse_rank(value, &rank)) {
      if (!c.warning.empty()) c.warning += "; ";
      c.warning += std::string(name) + "='" + value + "' is not a local rank; ignored";
      continue;
    }
    if (gpu_count <= 0) {
      c.reason = "no GPU visible";
      return c;
    }
    c.device = static_cast<int>(rank % gpu_count);
    c.reason = "local rank " + std::to_string(rank) + " (" + name + ") mod " +
               std::to_string(gpu_count) + " GPU" + (gpu_count == 1 ? "" : "s");
    return c;
  }
  c.reason = "no OZDGEMM_DEVICE and no launcher local rank: the first GPU";
  return c;
}

int host_device() noexcept {
  static const int device = []() noexcept -> int {
    try {
      const int configured = settings().device;
      int count = 0;
      if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
      const device_choice c = choose_device(
          configured,
          [](const char* name) -> const char* {
            const char* v = std::getenv(name);
            return (v != nullptr && *v != '\0') ? v : nullptr;
          },
          count);
      if (!c.warning.empty()) logger().warn("GPU selection: {}", c.warning);
      // No GPU, or OZDGEMM_DEVICE out of range: the host path says why it stays on the CPU BLAS.
      if (c.device < count)
        logger().info("host calls use GPU {} of {} ({})", c.device, count, c.reason);
      return c.device;
    } catch (...) {
      return 0;  // logging failed; GPU 0 is the documented default
    }
  }();
  return device;
}

device_list choose_devices(bool all, const std::vector<int>& listed, int single, int gpu_count) {
  device_list l;
  if (gpu_count <= 0) {
    l.reason = "no GPU present";
    return l;
  }
  if (all) {
    for (int d = 0; d < gpu_count; ++d) l.devices.push_back(d);
    l.reason = "OZDGEMM_DEVICES=all";
    return l;
  }
  if (!listed.empty()) {
    std::string dropped;
    for (int d : listed) {
      if (d < gpu_count) {
        l.devices.push_back(d);
      } else {
        dropped += (dropped.empty() ? "" : ",") + std::to_string(d);
      }
    }
    if (!dropped.empty())
      l.warning = "OZDGEMM_DEVICES lists GPU(s) " + dropped + " but only " +
                  std::to_string(gpu_count) + " exist; " +
                  (l.devices.empty() ? "host calls stay on the CPU BLAS" : "they are left out");
    l.reason = l.devices.empty() ? "OZDGEMM_DEVICES: no listed GPU exists" : "OZDGEMM_DEVICES";
    return l;
  }
  if (single >= 0 && single < gpu_count) {
    l.devices.push_back(single);
    l.reason = "one GPU";
  } else {
    l.reason = "OZDGEMM_DEVICE out of range";
  }
  return l;
}

const device_list& host_devices() noexcept {
  static const device_list* list = []() noexcept -> const device_list* {
    try {
      const config& cfg = settings();
      int count = 0;
      if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        count = 0;
      }
      // host_device() logs its own choice; it matters only without OZDGEMM_DEVICES.
      const bool listed = cfg.all_devices || !cfg.devices.empty();
      auto* l = new device_list(  // leaked: read until exit
          choose_devices(cfg.all_devices, cfg.devices, listed ? -1 : host_device(), count));
      if (!l->warning.empty()) logger().warn("GPU selection: {}", l->warning);
      if (listed && !l->devices.empty()) {
        std::string ids;
        for (int d : l->devices) ids += (ids.empty() ? "" : ",") + std::to_string(d);
        logger().info("host calls use GPUs {} ({})", ids, l->reason);
      }
      return l;
    } catch (...) {
      static device_list none;  // logging or allocation failed: the CPU BLAS
      none.reason = "GPU selection failed";
      return &none;
    }
  }();
  return *list;
}

}  // namespace ozdgemm::detail
