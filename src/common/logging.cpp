#include "common/logging.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "common/env.hpp"

namespace ozdgemm::detail {
namespace {

// Writes every message to a file descriptor the library opened itself. spdlog's file sinks
// open by name; here the name is opened exactly once (open_log_file), so nothing can swap
// the file between a check and the open.
class fd_sink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit fd_sink(int fd) : fd_(fd) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    const char* p = buf.data();
    size_t left = buf.size();
    while (left > 0) {
      const ssize_t w = ::write(fd_, p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return;  // a full disk must not take the host program down
      p += w;
      left -= static_cast<size_t>(w);
    }
  }
  void flush_() override {}  // write(2) leaves nothing buffered in the process

 private:
  int fd_;  // never closed: the logger lives until the process exits
};

// Appends to `path`, creating it with mode 0644 (less under the umask). O_NOFOLLOW: a
// symbolic link planted at the path is refused rather than followed to a file the process
// may write but its user should not. O_CLOEXEC: children do not inherit the descriptor.
// Returns -1 with errno set on failure.
int open_log_file(const char* path) {
  int fd;
  do {
    fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

std::string open_failure(const char* path, int err) {
  // Linux reports a symbolic link refused by O_NOFOLLOW as ELOOP.
  const std::string why = err == ELOOP ? "it is a symbolic link, which is not followed"
                                       : std::strerror(err);
  return std::string("OZDGEMM_LOG_FILE='") + path + "' cannot be opened (" + why +
         "); logging to stderr";
}

spdlog::logger* make_logger() {
  std::vector<std::string> warnings;
  spdlog::sink_ptr sink;
  if (secure_execution() && settings_in_environment())
    warnings.push_back(
        "setuid/setgid process (secure execution): every OZDGEMM_* environment setting is "
        "ignored, defaults apply");
  if (const char* file = setting_env("OZDGEMM_LOG_FILE")) {
    const int fd = open_log_file(file);
    if (fd >= 0)
      sink = std::make_shared<fd_sink>(fd);
    else
      warnings.push_back(open_failure(file, errno));
  }
  if (!sink) sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  // Deliberately leaked: static destructors must not tear down a logger still in use.
  auto* log = new spdlog::logger("ozdgemm", sink);
  log->set_pattern("[ozdgemm %l] %v");
  spdlog::level::level_enum level = spdlog::level::warn;
  if (const char* env = setting_env("OZDGEMM_LOG_LEVEL")) {
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
