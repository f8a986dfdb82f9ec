#include "common/env.hpp"

#include <sys/auxv.h>

#include <cstdlib>
#include <cstring>

extern char** environ;

namespace ozdgemm::detail {

const char* setting_env(const char* name) noexcept {
  // secure_getenv, not getenv: it returns null whenever AT_SECURE is set (glibc >= 2.17).
  const char* v = secure_getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

const char* user_env(const char* name) noexcept { return setting_env(name); }

const char* launcher_env(const char* name) noexcept {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

bool settings_in_environment() noexcept {
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, "OZDGEMM_", 8) == 0) return true;
  return false;
}

bool secure_execution() noexcept { return getauxval(AT_SECURE) != 0; }

}  // namespace ozdgemm::detail
