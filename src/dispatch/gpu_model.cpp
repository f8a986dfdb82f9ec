#include "dispatch/gpu_model.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "availability.cuh"
#include "common/device_guard.hpp"
#include "common/logging.hpp"
#include "dispatch/calibration.hpp"
#include "engine/handle_context.hpp"
#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::detail {
namespace {

struct slot {
  std::mutex mutex;
  gpu_model model;
  bool known = false;       // identity and prior worked out
  bool calibrated = false;  // calibration done or given up for this process
};

// Leaked: models are read by calls until exit.
std::mutex& registry_mutex() {
  static auto* m = new std::mutex();
  return *m;
}
std::map<int, std::unique_ptr<slot>>& registry() {
  static auto* r = new std::map<int, std::unique_ptr<slot>>();
  return *r;
}

std::string library_version() {
  return std::to_string(OZDGEMM_VERSION_MAJOR) + "." + std::to_string(OZDGEMM_VERSION_MINOR) + "." +
         std::to_string(OZDGEMM_VERSION_PATCH);
}

int attribute(cudaDeviceAttr a, int device) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return v;
}

// Identity, capability and prior, with `device` current.
void identify(int device, gpu_model* m) {
  m->device = device;
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
    (void)cudaGetLastError();
    m->label = "GPU " + std::to_string(device);
    m->unusable = "its properties cannot be read";
    return;
  }
  m->id.name = p.name;
  m->id.cc_major = p.major;
  m->id.cc_minor = p.minor;
  m->id.sm_count = p.multiProcessorCount;
  m->id.sm_clock_hz = 1e3 * attribute(cudaDevAttrClockRate, device);
  // Double data rate: two transfers per memory clock on every bus width.
  m->id.mem_bw = 2.0 * 1e3 * attribute(cudaDevAttrMemoryClockRate, device) *
                 attribute(cudaDevAttrGlobalMemoryBusWidth, device) / 8.0;
  m->label = "GPU " + std::to_string(device) + " (" + m->id.name + ")";
  if (p.major < 8) {
    m->unusable = "compute capability below 8.0: the library is built for 8.0 and later";
  } else if (kernel_image_status() != cudaSuccess) {
    m->unusable = "this build has no kernel image for its compute capability";
  }
  m->rates = prior_for(m->id);
}

std::string rate_text(const gpu_rates& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "FP64 %.3g TFLOP/s, INT8 %.3g TOP/s, preparation %.3g TB/s, CRT %.3g TB/s, "
                "host link %.3g GB/s, CPU BLAS %.3g GFLOP/s",
                r.fp64 * 1e-12, r.int8 * 1e-12, r.prep_bw * 1e-12, r.crt_bw * 1e-12,
                r.host_link * 1e-9, r.cpu_blas * 1e-9);
  return buf;
}

// The bytes calibration may take: OZDGEMM_MAX_WORKSPACE, and the 90%-of-free rule divided by
// the processes sharing the GPU, as for a workspace.
size_t calibration_budget() {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  size_t budget = free_bytes / 10 * 9 / memory_sharers();
  if (workspace_cap() != 0 && workspace_cap() < budget) budget = workspace_cap();
  return budget;
}

// Calibrates m (device current) as `mode` says, falling back to the prior. Returns what the log
// line should add (where the rates were not cached, what was replaced).
std::string calibrate(gpu_model* m, calibrate_mode mode) {
  const gpu_rates prior = m->rates;
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) (void)cudaGetLastError();
  const calibration_key key{m->id.name, m->id.cc_major, m->id.cc_minor, driver, library_version()};
  const std::string dir = calibration_cache_dir();
  gpu_rates r;
  std::string clamped, note;
  auto use = [&](const gpu_rates& measured, const char* how) {
    r = with_margin(bounded_calibration(measured, prior, &clamped));
    r.cpu_blas = prior.cpu_blas;
    r.source = how;
    m->rates = r;
  };
  if (mode == calibrate_mode::automatic && load_cached_rates(dir, key, &r)) {
    use(r, "calibrated (cached)");
  } else {
    // One process per key measures; the others wait for its file (up to 2 s), then read it.
    const calibration_lock lock(dir, key, 2000);
    if (mode == calibrate_mode::automatic && load_cached_rates(dir, key, &r)) {
      use(r, "calibrated (cached)");
    } else {
      std::string why;
      gpu_rates measured;
      if (measure_rates(prior, calibration_budget(), &measured, &why)) {
        use(measured, "calibrated");
        std::string store_why;
        if (dir.empty())
          note = "; not cached: no HOME or XDG_CACHE_HOME";
        else if (!store_cached_rates(dir, key, measured, &store_why))
          note = "; not cached: " + store_why;
      } else {
        note = "; calibration not run: " + why;
      }
    }
  }
  if (!clamped.empty()) note += "; implausible measurements replaced by the prior: " + clamped;
  return note;
}

}  // namespace

const gpu_model& model_of_device(int device, calibrate_mode mode, bool defer) noexcept {
  static const gpu_model unknown_device = [] {  // returned only on failure
    gpu_model m;
    m.label = "GPU ?";  // short strings: no allocation
    m.unusable = "its model could not be worked out";
    return m;
  }();
  try {
    slot* s = nullptr;
    {
      std::lock_guard<std::mutex> lock(registry_mutex());
      auto& p = registry()[device];
      if (!p) p = std::make_unique<slot>();
      s = p.get();
    }
    std::lock_guard<std::mutex> lock(s->mutex);
    const bool first = !s->known;
    if (first) {
      device_guard guard(device);
      identify(device, &s->model);
      s->known = true;
    }
    std::string note;
    const bool calibrate_now =
        mode != calibrate_mode::off && !s->calibrated && !defer && s->model.unusable == nullptr;
    if (calibrate_now) {
      device_guard guard(device);
      note = calibrate(&s->model, mode);
      s->calibrated = true;
    }
    if (first || calibrate_now) {
      const gpu_model& m = s->model;
      if (m.unusable != nullptr)
        logger().info("{}: every call runs native: {}", m.label, m.unusable);
      else if (m.rates.source.empty())
        logger().info(
            "{}: no performance data for this GPU: auto mode keeps its calls native "
            "(OZDGEMM_CALIBRATE=force measures it, OZDGEMM_MODE=emulate emulates)",
            m.label);
      else
        logger().info("{}: performance model from {}: {}{}", m.label, m.rates.source,
                      rate_text(m.rates), note);
    }
    return s->model;
  } catch (...) {
    return unknown_device;
  }
}

}  // namespace ozdgemm::detail
