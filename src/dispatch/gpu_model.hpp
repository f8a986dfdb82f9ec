// The GPU a call runs on, as the dispatch sees it: what it is, whether the emulation can run on
// it at all, and the rates the performance model uses for it. Worked out once per device per
// process, on the first call that needs it (never at load time).
#pragma once

#include <string>

#include "dispatch/gpu_rates.hpp"

namespace ozdgemm::detail {

// OZDGEMM_CALIBRATE: measure the rates on first use unless a cached measurement exists (auto),
// never (off: the published prior), or again whatever the cache holds (force).
enum class calibrate_mode { automatic, off, force };

struct gpu_model {
  int device = -1;
  gpu_identity id;
  std::string label;  // "GPU 0 (NVIDIA H200)", for the decision lines
  // Why no call is emulated on this GPU (a static string), or null: a compute capability below
  // 8.0, no kernel image of this build for it, or properties that cannot be read.
  const char* unusable = nullptr;
  gpu_rates rates;  // the prior until calibrated
};

// The model of `device`. With `calibrate` other than off, the first call that asks also
// calibrates it (dispatch/calibration.hpp), unless `defer` (the caller's stream is being
// captured: measuring would allocate and synchronise) leaves that to a later call; the model
// then says the prior meanwhile. Logs, once per device, the rates in use (info). Thread-safe;
// never throws; the reference stays valid until exit.
const gpu_model& model_of_device(int device, calibrate_mode calibrate, bool defer = false) noexcept;

}  // namespace ozdgemm::detail
