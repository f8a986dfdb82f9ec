// The real definitions behind the symbols this library intercepts.
#pragma once

namespace ozdgemm::detail {

// The next definition of `name` after libozdgemm.so (dlsym RTLD_NEXT), else the one in
// `library` (dlopen'd once). Never a definition inside libozdgemm.so itself, which would
// recurse. Null if none exists.
void* resolve_next(const char* name, const char* library) noexcept;

// True while this thread runs inside an intercepted call: cuBLAS or BLAS entry points that
// the library itself (or the real routine) reaches go straight to the real definitions.
bool inside_interception() noexcept;

class interception_scope {
 public:
  interception_scope() noexcept;
  ~interception_scope();
  interception_scope(const interception_scope&) = delete;
  interception_scope& operator=(const interception_scope&) = delete;
};

}  // namespace ozdgemm::detail
