#include "common/env.hpp"

#include <sys/auxv.h>

#include <cstdlib>

namespace ozdgemm::detail {

const char* setting_env(const char* name) noexcept {
  // secure_getenv, not getenv: it returns null whenever AT_SECURE is set (glibc >= 2.17).
  const char* v = secure_getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

bool secure_execution() noexcept { return getauxval(AT_SECURE) != 0; }

}  // namespace ozdgemm::detail
