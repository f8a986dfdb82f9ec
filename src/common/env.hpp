// The one way the library reads its settings from the environment.
//
// The library runs inside other people's processes, some of them privileged. In a
// secure-execution process (setuid, setgid, or gaining file capabilities: the kernel sets
// AT_SECURE) the environment belongs to the unprivileged caller, so every OZDGEMM_* variable
// is ignored there: glibc's secure_getenv returns null in such a process. Nothing in src/ may
// call getenv directly.
#pragma once

namespace ozdgemm::detail {

// The value of `name`, or nullptr when it is unset, empty, or the process is in
// secure-execution mode.
const char* setting_env(const char* name) noexcept;

// True when the process runs in secure-execution mode (AT_SECURE), i.e. when setting_env
// ignores the environment.
bool secure_execution() noexcept;

}  // namespace ozdgemm::detail
