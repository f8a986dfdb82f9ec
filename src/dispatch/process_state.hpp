// Whether this process may use CUDA at all. CUDA is not fork-safe: a child forked from a
// process in which the CUDA driver was loaded inherits contexts, streams and allocations that
// are not valid in it, and the library's own cached state (host-path buffers, per-handle
// workspaces) points at them. In such a child, host calls must go to the CPU BLAS and cuBLAS
// hooks must not touch the library's CUDA state (they forward to the real cuBLAS, whose
// status the caller gets).
//
// Detection: a pthread_atfork handler, registered when libozdgemm.so is loaded (registering
// touches no CUDA), notes in the parent just before fork() whether libcuda.so.1 is loaded, and
// marks the child. A driver loaded but never initialised also counts (conservative: such a
// child uses the CPU BLAS).
#pragma once

namespace ozdgemm::detail {

// False in a child forked after the CUDA driver was loaded (at any depth). Never throws;
// async-signal-safe.
bool cuda_usable_in_this_process() noexcept;

// The reason, for logs, when cuda_usable_in_this_process() is false (a static string).
const char* cuda_unusable_reason() noexcept;

}  // namespace ozdgemm::detail
