// The library's one named spdlog logger ("ozdgemm"). Level from OZDGEMM_LOG_LEVEL
// (off|error|warn|info|debug|trace, default warn), sink from OZDGEMM_LOG_FILE (default
// stderr). Created on first use, never destroyed (it may be used from atexit handlers).
#pragma once

#include <spdlog/spdlog.h>

namespace ozdgemm::detail {

spdlog::logger& logger();

}  // namespace ozdgemm::detail
