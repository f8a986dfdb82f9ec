// The C++ half of the replacement libblas. cmake/blas_forwarders.cmake generates, for every
// routine of blas_symbols.txt, an exported assembly trampoline `jmp *slot`; each slot starts
// out pointing at a lazy stub that saves the argument registers and calls
// ozdgemm_forward_resolve. The stub then jumps to whatever address this returns, with the
// caller's arguments intact, and every later call jumps straight there.
//
// Trampolines rather than C wrappers: they need no prototype per routine (320 of them, some
// variadic, some returning COMPLEX in compiler-specific ways), so they forward each call
// exactly, whatever its signature.
#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "common/logging.hpp"
#include "interpose/cpu_blas.hpp"

namespace {

// Stands in for a routine that no CPU BLAS defines (already logged as an error by
// cpu_blas_symbol): the call does nothing and returns 0. A struct of one integer and one
// double comes back in rax and xmm0 (SysV x86-64), so integer and floating-point results both
// read as zero.
struct zero_result {
  std::int64_t integer;
  double real;
};

zero_result forward_unavailable() noexcept { return {0, 0.0}; }

}  // namespace

// Called from the lazy stub with the routine's slot and name (hidden: only the generated
// trampolines use it). Two threads may race here on the same slot; both store the same
// address. A routine no library defines yet is not stored: the next call looks again once the
// process has loaded another object (cpu_routine).
extern "C" void* ozdgemm_forward_resolve(void** slot, const char* name) noexcept {
  void* target = ozdgemm::detail::cpu_routine(name);
  if (target == nullptr) {
    try {
      static std::mutex mutex;
      static auto* told = new std::set<std::string>();  // leaked: used until exit
      std::lock_guard<std::mutex> lock(mutex);
      if (told->insert(name).second)
        ozdgemm::detail::logger().error("{}: calls to it do nothing and return 0", name);
    } catch (...) {
    }
    return reinterpret_cast<void*>(&forward_unavailable);
  }
  __atomic_store_n(slot, target, __ATOMIC_RELEASE);
  return target;
}
