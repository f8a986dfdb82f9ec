// Collects what the library logs during a test (at the logger's level: warn unless
// OZDGEMM_LOG_LEVEL says otherwise), for tests of the one-warning rule of the settings.
#pragma once

#include <spdlog/sinks/ringbuffer_sink.h>

#include <algorithm>
#include <memory>
#include <string>

#include "common/logging.hpp"

namespace ozdgemm::test {

struct log_capture {
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink =
      std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  log_capture() { detail::logger().sinks().push_back(sink); }
  ~log_capture() {
    auto& sinks = detail::logger().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink), sinks.end());
  }
  log_capture(const log_capture&) = delete;
  log_capture& operator=(const log_capture&) = delete;
  // Lines that contain `needle`.
  int count(const std::string& needle) const {
    int n = 0;
    for (const std::string& line : sink->last_formatted())
      n += line.find(needle) != std::string::npos;
    return n;
  }
};

}  // namespace ozdgemm::test
