// Test-only fault injection. OZDGEMM_INJECT_FAULT=alloc|cublas|kernel[:count] (read once, on
// the first query) makes the next `count` (default 1) workspace allocations fail, INT8 cuBLAS
// GEMMs fail, or kernel launches fail, so that the tests can prove every such failure ends in a
// native fallback (intercepted calls) or a clear status (C API) and never in a wrong result.
// Unset, it costs one relaxed atomic load per query. Not a user setting: documented as
// test-only in the README.
#pragma once

namespace ozdgemm::detail {

enum class fault { alloc, cublas, kernel };

// True when the switch names `f` and its count is not used up; each true uses one. A true
// answer is logged at warn level ("injected fault: ..."). Never throws.
bool inject_fault(fault f) noexcept;

}  // namespace ozdgemm::detail
