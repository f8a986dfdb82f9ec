// Shared libraries the library loads on first use rather than links (cuBLAS, cuBLASLt): a
// process that preloads libozdgemm.so and never calls DGEMM must not pay their load-time
// constructors. Each is opened once, RTLD_NOW | RTLD_LOCAL (nothing of it joins the global
// scope on the library's account), and never closed: handles and streams made through it live
// until exit.
#pragma once

#include <spdlog/common.h>

namespace ozdgemm::detail {

class lazy_library {
 public:
  // `consequence` completes the log line of a failure ("GEMMs run natively").
  constexpr lazy_library(const char* soname, spdlog::level::level_enum level,
                         const char* consequence)
      : soname_(soname), level_(level), consequence_(consequence) {}

  // dlopen of the library; null when it cannot be loaded (logged at the library's level).
  // Callers keep the result in a function-local static, so it runs once. Never throws.
  void* open() const noexcept;

  // *slot = the entry point `name` of `library` (from open()); false, logged, when there is
  // none. Never throws.
  template <class F>
  bool resolve(void* library, const char* name, F* slot) const noexcept {
    void* p = symbol(library, name);
    *slot = reinterpret_cast<F>(p);
    return p != nullptr;
  }

 private:
  void* symbol(void* library, const char* name) const noexcept;

  const char* soname_;
  spdlog::level::level_enum level_;
  const char* consequence_;
};

// True when `p` points into libozdgemm.so itself (or into the program it is linked into): such
// a definition of an intercepted symbol would call straight back into its hook.
bool defined_in_this_library(const void* p) noexcept;

}  // namespace ozdgemm::detail
