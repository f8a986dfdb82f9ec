// What happened to each intercepted call: one debug line per call, and counters by outcome and
// reason that an info-level summary reports at exit (registered on the first call, not at
// load time).
#pragma once

#include <cstdint>

namespace ozdgemm::detail {

enum class outcome { emulated, native, fallback };

struct call_record {
  const char* entry;  // intercepted symbol
  int64_t m, n, k;
  outcome result;
  const char* reason;  // static string
  int num_moduli;      // 0 when not emulated
  double predicted_native_ms, predicted_emulated_ms;
  double seconds;  // host time spent in the call (device calls: enqueue time only)
  const char* gpu = nullptr;  // "GPU 0 (NVIDIA H200)": the GPU that ran or would have run it
};

void log_call(const call_record& r) noexcept;

}  // namespace ozdgemm::detail
