#include "dispatch/device_select.hpp"

#include <cuda_runtime.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/env.hpp"
#include "common/logging.hpp"
#include "engine/handle_context.hpp"
#include "dispatch/settings.hpp"

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

// A local size is a rank count: a positive decimal integer, at most 2^20 (far above any node).
bool parse_size(const char* s, long* out) {
  long v = 0;
  if (!parse_rank(s, &v) || v < 1 || v > (1L << 20)) return false;
  *out = v;
  return true;
}

// Digits at *p as a positive count <= 2^20, advancing *p past them.
bool take_count(const char** p, long* out) {
  long v = 0;
  if (**p < '0' || **p > '9') return false;
  while (**p >= '0' && **p <= '9') {
    v = v * 10 + (*(*p)++ - '0');
    if (v > (1L << 20)) return false;
  }
  if (v < 1) return false;
  *out = v;
  return true;
}

std::string plural(long n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Registered at load: storing a function pointer touches no CUDA (the engine calls it when a
// workspace is first sized, after CUDA is up anyway).
[[maybe_unused]] const bool registered = (set_memory_sharers_source(&gpu_sharers), true);


// The visible GPUs; 0 when CUDA cannot count them (the error is cleared).
int visible_gpus() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  return count;
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
    c.local_rank = rank;
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
      const int count = visible_gpus();
      const device_choice c = choose_device(settings().device, launcher_env, count);
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
      const int count = visible_gpus();
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

bool slurm_tasks_on_node(const char* list, long node, long* tasks, bool* exact) {
  if (list == nullptr) return false;
  long max = 0, first = 0, picked = 0;  // nodes [first, first + repeat) have `count` tasks
  bool found = false;
  for (const char* p = list;;) {
    long count = 0, repeat = 1;
    if (!take_count(&p, &count)) return false;
    if (*p == '(') {
      if (p[1] != 'x') return false;
      p += 2;
      if (!take_count(&p, &repeat) || *p++ != ')') return false;
    }
    if (!found && node >= first && node - first < repeat) {
      picked = count;
      found = true;
    }
    if (count > max) max = count;
    first += repeat;  // at most 2^20 per entry: no overflow for any list that fits in memory
    if (*p == '\0') break;
    if (*p++ != ',') return false;
  }
  *tasks = found ? picked : max;
  *exact = found;
  return true;
}

gpu_sharing count_sharers(int procs_per_gpu, const device_choice& device, bool listed,
                          const std::function<const char*(const char*)>& env, int gpu_count) {
  gpu_sharing s;
  if (procs_per_gpu > 0) {
    s.sharers = procs_per_gpu;
    s.reason = "OZDGEMM_PROCS_PER_GPU=" + std::to_string(procs_per_gpu);
    return s;
  }
  auto warn = [&](const std::string& what) {
    if (!s.warning.empty()) s.warning += "; ";
    s.warning += what;
  };
  long size = 0, node = -1;
  bool node_read = false;
  std::string source;
  for (const char* name : kLocalSizeVariables) {
    const char* value = env(name);
    if (value == nullptr) continue;
    const bool slurm = std::strncmp(name, "SLURM_", 6) == 0;
    if (!slurm) {
      if (parse_size(value, &size)) {
        source = std::string(name) + "=" + value;
        break;
      }
      warn(std::string(name) + "='" + value + "' is not a number of local ranks; ignored");
      continue;
    }
    // This node's entry needs SLURM_NODEID; without a valid one, the largest entry (the most
    // sharers any node has) is the cautious choice.
    if (!node_read) {
      node_read = true;
      if (const char* id = env("SLURM_NODEID"); id != nullptr && !parse_rank(id, &node)) {
        warn(std::string("SLURM_NODEID='") + id + "' is not a node index; ignored");
        node = -1;
      }
    }
    bool exact = false;
    if (!slurm_tasks_on_node(value, node, &size, &exact)) {
      warn(std::string(name) + "='" + value + "' is not a Slurm tasks-per-node list; ignored");
      continue;
    }
    source = std::string(name) + "=" + value +
             (exact ? " node " + std::to_string(node) + " (SLURM_NODEID)"
                    : std::string(" (largest entry: ") +
                          (node < 0 ? "no SLURM_NODEID)" : "SLURM_NODEID past the list)"));
    break;
  }
  if (gpu_count <= 0) {
    s.reason = "no GPU visible";
    return s;
  }
  if (source.empty()) {
    s.reason = "no launcher local size";
    return s;
  }
  const std::string gpus = plural(gpu_count, "GPU", "GPUs");
  if (listed) {
    s.sharers = static_cast<int>(size);
    s.reason = source + ", every rank on every GPU of OZDGEMM_DEVICES";
  } else if (device.local_rank >= 0 && device.local_rank < size) {
    // Ranks r < size with r mod G == device: the ranks the local-rank rule puts on it.
    const long g = gpu_count, d = device.device;
    s.sharers = static_cast<int>(d < size ? (size - 1 - d) / g + 1 : 1);
    s.reason = source + ", " + gpus;
  } else {
    // OZDGEMM_DEVICE, or a local rank outside the local size (the launchers disagree): the
    // ranks of this node spread evenly, rounded up.
    s.sharers = static_cast<int>((size + gpu_count - 1) / gpu_count);
    s.reason = source + ", " + gpus + ", " +
               (device.local_rank >= 0 ? "local rank " + std::to_string(device.local_rank) +
                                             " outside the local size"
                                       : std::string("no local rank for the device")) +
               ": ceil(" + std::to_string(size) + " / " + std::to_string(gpu_count) + ")";
  }
  if (s.sharers < 1) s.sharers = 1;
  return s;
}

unsigned gpu_sharers() noexcept {
  // A process that only calls the C API has not read the settings: not known (the engine then
  // uses 1, the single-process rule, as for OZDGEMM_MAX_WORKSPACE) until the interposer has.
  if (!settings_loaded()) return 0;
  static const unsigned sharers = []() noexcept -> unsigned {
    try {
      const config& cfg = settings();
      const int count = visible_gpus();
      // The same choice as host_device() (which logs its own warnings).
      const device_choice d = choose_device(cfg.device, launcher_env, count);
      const bool listed = cfg.all_devices || !cfg.devices.empty();
      const gpu_sharing s = count_sharers(cfg.procs_per_gpu, d, listed, launcher_env, count);
      if (!s.warning.empty()) logger().warn("GPU memory share: {}", s.warning);
      const std::string who = s.sharers == 1 ? "1 process uses"
                                             : std::to_string(s.sharers) + " processes share";
      const std::string where = listed ? "each GPU of OZDGEMM_DEVICES"
                                       : "GPU " + std::to_string(d.device);
      const std::string share = s.sharers == 1 ? "90%" : "90% / " + std::to_string(s.sharers);
      logger().info("{} {} ({}): a workspace may take {} of the free device memory", who, where,
                    s.reason, share);
      return static_cast<unsigned>(s.sharers);
    } catch (...) {
      return 1;  // logging failed: the single-process rule
    }
  }();
  return sharers;
}

}  // namespace ozdgemm::detail
