// The one place the library reads the environment: its settings, and the launchers' variables.
//
// The library runs inside other people's processes, some of them privileged. In a
// secure-execution process (setuid, setgid, or gaining file capabilities: the kernel sets
// AT_SECURE) the environment belongs to the unprivileged caller, so every OZDGEMM_* variable
// is ignored there: glibc's secure_getenv returns null in such a process. Nothing else in src/,
// kernels/ or include/ may read the environment (tests/security checks it).
#pragma once

namespace ozdgemm::detail {

// The value of `name`, or nullptr when it is unset, empty, or the process is in
// secure-execution mode.
const char* setting_env(const char* name) noexcept;

// A variable set by a job launcher (MPI, Slurm: local rank and size) that picks the GPU of
// host calls and the share of its memory, not a setting of the library: read as the launcher
// wrote it; nullptr when unset or empty.
const char* launcher_env(const char* name) noexcept;

// A variable of the user's environment the library needs beyond its settings (HOME,
// XDG_CACHE_HOME: where the calibration cache lives), read like the settings: nullptr when
// unset, empty, or in secure-execution mode (the folder would be the unprivileged caller's).
const char* user_env(const char* name) noexcept;

// True when any OZDGEMM_* variable is set, whether or not setting_env honours it (the log says
// so once in a secure-execution process).
bool settings_in_environment() noexcept;

// True when the process runs in secure-execution mode (AT_SECURE), i.e. when setting_env
// ignores the environment.
bool secure_execution() noexcept;

}  // namespace ozdgemm::detail
