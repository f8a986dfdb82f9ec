#include "common/fault_injection.hpp"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/env.hpp"
#include "common/logging.hpp"

namespace ozdgemm::detail {
namespace {

const char* name(fault f) {
  switch (f) {
    case fault::alloc:
      return "alloc";
    case fault::cublas:
      return "cublas";
    case fault::kernel:
      return "kernel";
  }
  return "?";
}

struct injection {
  bool armed = false;
  fault kind = fault::alloc;
  std::atomic<long long> left{0};
};

// Parsed once; an unparsable value is ignored with one warning (it is a test switch: a typo
// must not silently turn a fault test into a plain run, hence the warning).
injection& state() {
  static injection* s = [] {
    auto* st = new injection();  // leaked: queried until exit
    const char* v = setting_env("OZDGEMM_INJECT_FAULT");
    if (v == nullptr) return st;
    const char* colon = std::strchr(v, ':');
    const size_t len = colon != nullptr ? static_cast<size_t>(colon - v) : std::strlen(v);
    long long count = 1;
    bool ok = true;
    if (colon != nullptr) {
      char* end = nullptr;
      errno = 0;
      count = std::strtoll(colon + 1, &end, 10);
      ok = errno == 0 && end != colon + 1 && *end == '\0' && count > 0;
    }
    bool known = false;
    for (fault f : {fault::alloc, fault::cublas, fault::kernel})
      if (std::strlen(name(f)) == len && std::strncmp(v, name(f), len) == 0) {
        st->kind = f;
        known = true;
      }
    if (!ok || !known) {
      logger().warn(
          "OZDGEMM_INJECT_FAULT='{}' is invalid (expected alloc|cublas|kernel[:count]); "
          "no fault injected",
          v);
      return st;
    }
    st->armed = true;
    st->left.store(count);
    logger().warn("OZDGEMM_INJECT_FAULT: test-only fault injection armed: {} x {}", name(st->kind),
                  count);
    return st;
  }();
  return *s;
}

}  // namespace

bool inject_fault(fault f) noexcept {
  try {
    injection& s = state();
    if (!s.armed || s.kind != f) return false;
    long long left = s.left.load(std::memory_order_relaxed);
    while (left > 0 && !s.left.compare_exchange_weak(left, left - 1)) {
    }
    if (left <= 0) return false;
    logger().warn("injected fault: {} ({} more to come)", name(f), left - 1);
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace ozdgemm::detail
