#include "common/logging.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <string>

namespace ozdgemm::detail {
namespace {

spdlog::logger* make_logger() {
  std::vector<std::string> warnings;
  spdlog::sink_ptr sink;
  const char* file = std::getenv("OZDGEMM_LOG_FILE");
  if (file != nullptr && *file != '\0') {
    try {
      sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(file);
    } catch (const std::exception& e) {
      warnings.push_back(std::string("OZDGEMM_LOG_FILE='") + file +
                         "' cannot be opened (" + e.what() + "); logging to stderr");
    }
  }
  if (!sink) sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  // Deliberately leaked: static destructors must not tear down a logger still in use.
  auto* log = new spdlog::logger("ozdgemm", sink);
  log->set_pattern("[ozdgemm %l] %v");
  spdlog::level::level_enum level = spdlog::level::warn;
  if (const char* env = std::getenv("OZDGEMM_LOG_LEVEL"); env != nullptr && *env != '\0') {
    const std::string v(env);
    const auto parsed = spdlog::level::from_str(v);
    // from_str maps unknown names to off; only accept a name that round-trips.
    if (v == "off" || parsed != spdlog::level::off) {
      level = parsed;
    } else {
      warnings.push_back("OZDGEMM_LOG_LEVEL='" + v + "' is not one of off|error|warn|info|debug|trace; using warn");
    }
  }
  log->set_level(level);
  log->flush_on(spdlog::level::warn);
  for (const auto& w : warnings) log->warn("{}", w);
  return log;
}

}  // namespace

spdlog::logger& logger() {
  static spdlog::logger* log = make_logger();
  return *log;
}

}  // namespace ozdgemm::detail
