#include "dispatch/settings.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/env.hpp"
#include "common/logging.hpp"
#include "core/moduli.hpp"
#include "engine/handle_context.hpp"
#include "engine/int8_gemm.hpp"

namespace ozdgemm::detail {
namespace {

// Ignored in setuid/setgid processes (common/env.hpp).
const char* env(const char* name) { return setting_env(name); }

void invalid(const char* name, const char* value, const char* expected, const std::string& used) {
  logger().warn("{}='{}' is invalid (expected {}); using {}", name, value, expected, used);
}

bool parse_long(const char* s, long long* out) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0') return false;
  *out = v;
  return true;
}

bool parse_double(const char* s, double* out) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0') return false;
  *out = v;
  return true;
}

// Bytes, with an optional K, M or G suffix (powers of 1024), no overflow.
bool parse_bytes(const char* s, size_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || end == s || *s == '-' || *s == '+') return false;
  int shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10;
  else if (*end == 'M' || *end == 'm') shift = 20;
  else if (*end == 'G' || *end == 'g') shift = 30;
  if (shift != 0) ++end;
  if (*end != '\0') return false;
  if (v > (static_cast<unsigned long long>(SIZE_MAX) >> shift)) return false;
  *out = static_cast<size_t>(v) << shift;
  return true;
}

config load() {
  config c;
  // In a setuid/setgid process env() ignores everything; creating the logger says so once.
  if (secure_execution()) logger();
  if (const char* v = env("OZDGEMM_MODE")) {
    if (std::strcmp(v, "auto") == 0) c.mode = run_mode::automatic;
    else if (std::strcmp(v, "emulate") == 0) c.mode = run_mode::emulate;
    else if (std::strcmp(v, "native") == 0) c.mode = run_mode::native;
    else invalid("OZDGEMM_MODE", v, "auto|emulate|native", "auto");
  }
  if (const char* v = env("OZDGEMM_MODULI")) {
    long long s = 0;
    if (parse_long(v, &s) && s >= kMinModuli && s <= kMaxModuli) {
      c.moduli = moduli_setting::fixed(static_cast<int>(s));
    } else if (std::strcmp(v, "auto") == 0) {
      c.moduli = moduli_setting::automatic();
    } else if (std::strcmp(v, "certified") == 0) {
      c.moduli = moduli_setting::certified();
    } else {
      invalid("OZDGEMM_MODULI", v, "an integer in 2..20, auto or certified", "certified");
    }
  }
  if (const char* v = env("OZDGEMM_ACCURACY")) {
    if (!parse_accuracy_target(v, &c.accuracy))
      invalid("OZDGEMM_ACCURACY", v, "native|max|a number of bits in 1..200", "native");
  }
  if (const char* v = env("OZDGEMM_SCALING")) {
    if (std::strcmp(v, "fast") == 0) c.scaling = scaling_mode::fast;
    else if (std::strcmp(v, "accurate") == 0) c.scaling = scaling_mode::accurate;
    else invalid("OZDGEMM_SCALING", v, "fast|accurate", "fast");
  }
  if (const char* v = env("OZDGEMM_CALIBRATE")) {
    if (std::strcmp(v, "auto") == 0)
      c.calibrate = calibrate_mode::automatic;
    else if (std::strcmp(v, "off") == 0)
      c.calibrate = calibrate_mode::off;
    else if (std::strcmp(v, "force") == 0)
      c.calibrate = calibrate_mode::force;
    else
      invalid("OZDGEMM_CALIBRATE", v, "auto|off|force", "auto");
  }
  if (const char* v = env("OZDGEMM_CPU_BLAS")) c.cpu_blas = v;
  if (const char* v = env("OZDGEMM_CUBLASLT")) {
    if (std::strcmp(v, "on") == 0) c.serve_cublaslt = true;
    else if (std::strcmp(v, "off") == 0) c.serve_cublaslt = false;
    else invalid("OZDGEMM_CUBLASLT", v, "on|off", "on");
  }
  if (const char* v = env("OZDGEMM_POINTER_BATCHES")) {
    if (std::strcmp(v, "on") == 0) c.pointer_batches = true;
    else if (std::strcmp(v, "off") == 0) c.pointer_batches = false;
    else invalid("OZDGEMM_POINTER_BATCHES", v, "on|off", "on");
  }
  if (const char* v = env("OZDGEMM_DEVICE")) {
    long long d = 0;
    if (parse_long(v, &d) && d >= 0 && d < 1024) c.device = static_cast<int>(d);
    else invalid("OZDGEMM_DEVICE", v, "a GPU ordinal >= 0", "the local-rank rule");
  }
  if (const char* v = env("OZDGEMM_AUTO_MARGIN")) {
    double x = 0;
    if (parse_double(v, &x) && x >= 0.0 && x < 1.0) c.auto_margin = x;
    else invalid("OZDGEMM_AUTO_MARGIN", v, "a number in [0, 1)", "0.05");
  }
  if (const char* v = env("OZDGEMM_MIN_DIM")) {
    long long x = 0;
    if (parse_long(v, &x) && x >= 0) c.min_dim = x;
    else invalid("OZDGEMM_MIN_DIM", v, "an integer >= 0", "256");
  }
  if (const char* v = env("OZDGEMM_HOST_THREADS")) {
    long long x = 0;
    if (parse_long(v, &x) && x >= 1 && x <= 256) c.host_threads = static_cast<int>(x);
    else
      invalid("OZDGEMM_HOST_THREADS", v, "an integer in 1..256", "min(cores, 16 x GPUs)");
  }
  if (const char* v = env("OZDGEMM_HOST_TILE")) {
    long long x = 0;
    if (parse_long(v, &x) && x >= 0) c.host_tile = x;
    else invalid("OZDGEMM_HOST_TILE", v, "an integer >= 0", "0 (by size)");
  }
  if (const char* v = env("OZDGEMM_LEVEL3_BLOCK")) {
    long long x = 0;
    if (parse_long(v, &x) && x >= 1) c.level3_block = x;
    else invalid("OZDGEMM_LEVEL3_BLOCK", v, "an integer >= 1", "by the model");
  }
  if (const char* v = env("OZDGEMM_MAX_WORKSPACE")) {
    size_t x = 0;
    if (parse_bytes(v, &x)) c.max_workspace = x;
    else invalid("OZDGEMM_MAX_WORKSPACE", v, "bytes with an optional K|M|G suffix", "0 (no cap)");
  }
  if (const char* v = env("OZDGEMM_DEVICES")) {
    if (!parse_device_list(v, &c.devices, &c.all_devices))
      invalid("OZDGEMM_DEVICES", v, "all or a comma list of GPU ordinals",
              "the single GPU of OZDGEMM_DEVICE's rule");
  }
  if (const char* v = env("OZDGEMM_HOST_WORKERS_PER_DEVICE")) {
    long long x = 0;
    if (parse_long(v, &x) && x >= 1 && x <= 16) c.host_workers_per_device = static_cast<int>(x);
    else invalid("OZDGEMM_HOST_WORKERS_PER_DEVICE", v, "an integer in 1..16", "1");
  }
  if (const char* v = env("OZDGEMM_HOST_PEER")) {
    if (std::strcmp(v, "on") == 0)
      c.host_peer = true;
    else if (std::strcmp(v, "off") == 0)
      c.host_peer = false;
    else
      invalid("OZDGEMM_HOST_PEER", v, "on|off", "off");
  }
  if (const char* v = env("OZDGEMM_HOST_REGISTER")) {
    if (!parse_register_setting(v, &c.host_register))
      invalid("OZDGEMM_HOST_REGISTER", v, "off|call, optionally :bytes", "off");
  }
  if (const char* v = env("OZDGEMM_HOST_FAIL_AFTER")) {
    if (!parse_fail_after(v, &c.host_fail_after, &c.host_fail_worker))
      invalid("OZDGEMM_HOST_FAIL_AFTER", v, "tiles or tiles@worker", "no injected failure");
  }
  if (const char* v = env("OZDGEMM_PROCS_PER_GPU")) {
    long long x = 0;
    if (parse_long(v, &x) && x >= 1 && x <= 65536) c.procs_per_gpu = static_cast<int>(x);
    else invalid("OZDGEMM_PROCS_PER_GPU", v, "an integer in 1..65536", "the launcher's count");
  }
  // Read by the engine, which the C API reaches without this file: one reading, one warning
  // for an invalid value (the same wording as invalid() above).
  c.int8_gemm = int8_gemm_setting();
  // The engine enforces it wherever a workspace grows (host path included).
  set_workspace_cap(c.max_workspace);
  return c;
}

}  // namespace

namespace {
std::atomic<bool> loaded{false};
}  // namespace

const config& settings() {
  static const config c = [] {
    config read = load();
    loaded.store(true, std::memory_order_release);
    return read;
  }();
  return c;
}

bool settings_loaded() noexcept { return loaded.load(std::memory_order_acquire); }

ozdgemm_options_t api_options(const config& c) {
  const int accuracy = c.accuracy.kind == accuracy_kind::max    ? OZDGEMM_ACCURACY_MAX
                       : c.accuracy.kind == accuracy_kind::bits ? c.accuracy.bits
                                                                : OZDGEMM_ACCURACY_NATIVE;
  const int moduli = c.moduli.is_fixed()       ? c.moduli.count()
                     : c.moduli.is_certified() ? OZDGEMM_MODULI_CERTIFIED
                                               : OZDGEMM_MODULI_AUTO;
  return ozdgemm_options_t{
      moduli, c.scaling == scaling_mode::fast ? OZDGEMM_SCALING_FAST : OZDGEMM_SCALING_ACCURATE,
      accuracy};
}

const char* to_string(run_mode m) {
  switch (m) {
    case run_mode::automatic: return "auto";
    case run_mode::emulate: return "emulate";
    case run_mode::native: return "native";
  }
  return "?";
}

bool parse_device_list(const char* s, std::vector<int>* devices, bool* all) {
  if (s == nullptr) return false;
  if (std::strcmp(s, "all") == 0) {
    *all = true;
    devices->clear();
    return true;
  }
  std::vector<int> list;
  for (const char* p = s;;) {
    if (*p < '0' || *p > '9') return false;  // empty entry, sign, space
    long long d = 0;
    while (*p >= '0' && *p <= '9') {
      d = d * 10 + (*p++ - '0');
      if (d >= 1024) return false;
    }
    list.push_back(static_cast<int>(d));
    if (*p == '\0') break;
    if (*p++ != ',') return false;
  }
  *devices = std::move(list);
  *all = false;
  return true;
}

bool parse_register_setting(const char* s, register_setting* out) {
  if (s == nullptr) return false;
  const char* colon = std::strchr(s, ':');
  const std::string mode = colon != nullptr ? std::string(s, colon) : std::string(s);
  register_setting r;
  if (mode == "off")
    r.mode = register_mode::off;
  else if (mode == "call")
    r.mode = register_mode::call;
  else
    return false;
  if (colon != nullptr && (!parse_bytes(colon + 1, &r.cap) || r.cap < 4096)) return false;
  *out = r;
  return true;
}

bool parse_fail_after(const char* s, long long* tiles, int* worker) {
  if (s == nullptr || *s < '0' || *s > '9') return false;
  const char* at = std::strchr(s, '@');
  const std::string head = at != nullptr ? std::string(s, at) : std::string(s);
  long long t = 0, w = -1;
  if (!parse_long(head.c_str(), &t) || t < 0) return false;
  if (at != nullptr && (at[1] < '0' || at[1] > '9' || !parse_long(at + 1, &w) || w > 4096))
    return false;
  *tiles = t;
  *worker = static_cast<int>(w);
  return true;
}

}  // namespace ozdgemm::detail
