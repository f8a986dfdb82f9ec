#include "interpose/real_symbol.hpp"

#include <dlfcn.h>

#include "common/lazy_library.hpp"
#include "common/logging.hpp"

namespace ozdgemm::detail {
namespace {

thread_local int interception_depth = 0;

}  // namespace

void* resolve_next(const char* name, const char* library) noexcept {
  void* p = dlsym(RTLD_NEXT, name);
  if (p != nullptr && !defined_in_this_library(p)) return p;
  if (library == nullptr) return nullptr;
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    logger().error("cannot resolve {}: dlopen({}) failed: {}", name, library, dlerror());
    return nullptr;
  }
  p = dlsym(handle, name);
  if (p == nullptr || defined_in_this_library(p)) {
    logger().error("cannot resolve {} in {}", name, library);
    return nullptr;
  }
  return p;
}

bool inside_interception() noexcept { return interception_depth > 0; }

interception_scope::interception_scope() noexcept { ++interception_depth; }
interception_scope::~interception_scope() { --interception_depth; }

}  // namespace ozdgemm::detail
