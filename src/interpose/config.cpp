#include "interpose/config.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/env.hpp"
#include "common/logging.hpp"
#include "core/moduli.hpp"

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
    if (parse_long(v, &s) && s >= kMinModuli && s <= kMaxModuli) c.num_moduli = static_cast<int>(s);
    else invalid("OZDGEMM_MODULI", v, "an integer in 2..20", std::to_string(c.num_moduli));
  }
  if (const char* v = env("OZDGEMM_SCALING")) {
    if (std::strcmp(v, "fast") == 0) c.scaling = scaling_mode::fast;
    else if (std::strcmp(v, "accurate") == 0) c.scaling = scaling_mode::accurate;
    else invalid("OZDGEMM_SCALING", v, "fast|accurate", "accurate");
  }
  if (const char* v = env("OZDGEMM_CPU_BLAS")) c.cpu_blas = v;
  if (const char* v = env("OZDGEMM_DEVICE")) {
    long long d = 0;
    if (parse_long(v, &d) && d >= 0 && d < 1024) c.device = static_cast<int>(d);
    else invalid("OZDGEMM_DEVICE", v, "a GPU ordinal >= 0", "0");
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
  return c;
}

}  // namespace

const config& settings() {
  static const config c = load();
  return c;
}

const char* to_string(run_mode m) {
  switch (m) {
    case run_mode::automatic: return "auto";
    case run_mode::emulate: return "emulate";
    case run_mode::native: return "native";
  }
  return "?";
}

}  // namespace ozdgemm::detail
