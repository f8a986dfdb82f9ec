#include "common/error.hpp"

#include "common/logging.hpp"

namespace ozdgemm::detail {

std::string error_location(const char* file, int line, const char* expr, const char* detail) {
  return std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " + detail;
}

void log_ignored_cuda_error(cudaError_t code, const char* file, int line, const char* expr) {
  logger().warn("{}:{}: {} returned {} during cleanup (ignored)", file, line, expr,
                cudaGetErrorString(code));
}

}  // namespace ozdgemm::detail
