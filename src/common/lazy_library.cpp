#include "common/lazy_library.hpp"

#include <dlfcn.h>

#include "common/logging.hpp"

namespace ozdgemm::detail {

void* lazy_library::open() const noexcept {
  void* library = dlopen(soname_, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    log_nothrow(level_, "{} cannot be loaded ({}); {}", soname_,
                why != nullptr ? why : "unknown error", consequence_);
  }
  return library;
}

void* lazy_library::symbol(void* library, const char* name) const noexcept {
  void* p = dlsym(library, name);
  if (p == nullptr) log_nothrow(level_, "{} has no {}; {}", soname_, name, consequence_);
  return p;
}

bool defined_in_this_library(const void* p) noexcept {
  Dl_info mine{}, theirs{};
  if (dladdr(reinterpret_cast<const void*>(&defined_in_this_library), &mine) == 0) return false;
  if (dladdr(p, &theirs) == 0) return false;
  return mine.dli_fbase == theirs.dli_fbase;
}

}  // namespace ozdgemm::detail
