// The library's one named spdlog logger ("ozdgemm"). Level from OZDGEMM_LOG_LEVEL
// (off|error|warn|info|debug|trace, default warn), sink from OZDGEMM_LOG_FILE (default
// stderr). Created on first use, never destroyed (it may be used from atexit handlers).
#pragma once

#include <spdlog/spdlog.h>

namespace ozdgemm::detail {

spdlog::logger& logger();

// logger().log(level, ...) that never throws, for loaders and other noexcept paths: a message
// that cannot be formatted or written is dropped.
template <class... Args>
void log_nothrow(spdlog::level::level_enum level, const char* format,
                 const Args&... args) noexcept {
  try {
    logger().log(level, fmt::runtime(format), args...);
  } catch (...) {
  }
}

}  // namespace ozdgemm::detail
