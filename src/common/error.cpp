#include "common/error.hpp"

#include <cstring>

#include "common/logging.hpp"

namespace ozdgemm::detail {

const char* project_path(const char* file) {
  // The last of the project's folders in the path: the checkout itself may lie below a src/.
  const char* from = file;
  for (const char* folder : {"/src/", "/kernels/", "/include/"})
    for (const char* at = std::strstr(file, folder); at != nullptr;
         at = std::strstr(at + 1, folder))
      if (at + 1 > from) from = at + 1;
  return from;
}

std::string error_location(const char* file, int line, const char* expr, const char* detail) {
  return std::string(project_path(file)) + ":" + std::to_string(line) + ": " + expr +
         " failed: " + detail;
}

void log_ignored_cuda_error(cudaError_t code, const char* file, int line, const char* expr) {
  logger().warn("{}:{}: {} returned {} during cleanup (ignored)", project_path(file), line, expr,
                cudaGetErrorString(code));
}

}  // namespace ozdgemm::detail
