// Keeps the caller's floating-point exception flags as they were across the library's own host
// work.
#pragma once

#include <cfenv>

namespace ozdgemm::detail {

// Restores the calling thread's exception flags on every exit path. NumPy tests the flags after
// a matmul and warns ("invalid value encountered in matmul") when one is set: a host call the
// GPU served raised FE_INVALID in the caller's thread although its data were finite (measured
// with pip's NumPy on an H100; the library's bookkeeping or the CUDA runtime, not the caller's
// arithmetic). The product itself is computed on the GPU, which raises no host flags.
class fp_flags_guard {
 public:
  fp_flags_guard() noexcept { std::fegetexceptflag(&saved_, FE_ALL_EXCEPT); }
  ~fp_flags_guard() { std::fesetexceptflag(&saved_, FE_ALL_EXCEPT); }
  fp_flags_guard(const fp_flags_guard&) = delete;
  fp_flags_guard& operator=(const fp_flags_guard&) = delete;

 private:
  std::fexcept_t saved_{};
};

}  // namespace ozdgemm::detail
