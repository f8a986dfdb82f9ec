// What the library keeps per caller cuBLAS handle (and device): a private cuBLAS handle for
// the INT8 GEMMs, so the caller's handle is never modified, and a grow-only workspace.
//
// Ordering: a call runs on the caller's current stream. If the previous call on this context
// used another stream, the new stream first waits for the event recorded at the end of that
// call, so the shared workspace is never used by two streams at once. No host sync.
// A call that began and then failed (an exception between begin() and end()) is closed by the
// next begin(), which then orders after everything the failed call enqueued.
// Calls captured into a CUDA graph are not ordered this way (an event cannot tie a graph to
// eager work): as with cuBLAS's own workspace, a graph holding an emulated call must not run
// concurrently with other calls on the same handle.
//
// Workspace limits (checked only when the workspace must grow):
//   - the process-wide cap set_workspace_cap() (the interposer sets it from
//     OZDGEMM_MAX_WORKSPACE; 0 = none);
//   - never more than 90% of the device memory cudaMemGetInfo reports free at that moment,
//     divided by the number of processes sharing the GPU (memory_sharers(): MPI ranks of one
//     node, from the launcher), so that they do not starve each other: each takes its share,
//     the emulation gives way, the caller's native routine needs far less;
//   - never while the stream is being captured into a CUDA graph (allocating there would make
//     the workspace graph-owned).
// A refused or failed growth throws cuda_error(cudaErrorMemoryAllocation) with the reason:
// the C API returns OZDGEMM_STATUS_ALLOC_FAILED and the interposer runs the native routine.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <mutex>

#include "engine/gpu_choice.hpp"

namespace ozdgemm::detail {

class handle_context {
 public:
  explicit handle_context(int device);
  ~handle_context();
  handle_context(const handle_context&) = delete;
  handle_context& operator=(const handle_context&) = delete;

  // Held for the whole enqueue of one call.
  std::mutex& mutex() { return mutex_; }
  int device() const { return device_; }
  cublasHandle_t cublas() const { return cublas_; }

  // Orders `stream` after the previous call and binds the private handle to it.
  void begin(cudaStream_t stream);
  // A workspace of at least `bytes`, stream-ordered on the stream given to begin().
  void* workspace(size_t bytes);
  // Marks the end of this call's work on the stream.
  void end();
  // Bytes currently reserved.
  size_t workspace_bytes() const { return ws_bytes_; }
  // A per-call choice's event and non-blocking copy stream (engine/emulate.hpp), made on first
  // use on the context's device; call between begin() and end().
  cudaEvent_t choice_event();
  cudaStream_t choice_stream();
  // The graphs and tally of the moduli count chosen on the GPU (engine/gpu_choice.hpp), made
  // with the context (never under capture).
  gpu_choice_graphs& gpu_choice() { return *gpu_choice_; }

 private:
  std::mutex mutex_;
  int device_;
  cublasHandle_t cublas_ = nullptr;
  cudaEvent_t done_ = nullptr;
  cudaEvent_t choice_event_ = nullptr;
  cudaStream_t choice_stream_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaStream_t last_stream_ = nullptr;
  bool used_ = false;
  bool open_ = false;       // begin() without end(): the call failed part-way
  bool capturing_ = false;  // the current call's stream is being captured into a graph
  void* ws_ = nullptr;
  size_t ws_bytes_ = 0;
  std::unique_ptr<gpu_choice_graphs> gpu_choice_;
};

// The context of (caller handle, current device), created on first use.
std::shared_ptr<handle_context> context_for(cublasHandle_t caller);

// Process-wide workspace cap in bytes (0: no cap). Thread-safe.
void set_workspace_cap(size_t bytes) noexcept;
size_t workspace_cap() noexcept;

// The 90%-of-free-memory rule above, shared by every user of device memory in the library
// (workspaces here, the host path's buffers in host_path/offload.cpp): growing what one
// user holds from `held` to `need` bytes is allowed when `need` is at most 90% of the memory
// free now plus `held` (what is held is released before the new memory is taken), divided by
// `sharers` (0 counts as 1), in integer arithmetic that cannot overflow. Callers pass
// memory_sharers(); with 1 the rule is the single-process one, bit for bit. No default: a
// caller that forgot the count would silently take the whole GPU's share.
bool within_free_memory(size_t need, size_t held, size_t free_bytes, unsigned sharers) noexcept;

// Where the number of processes sharing this process's GPU comes from: libozdgemm.so registers
// dispatch/device_select's gpu_sharers() (launcher variables, OZDGEMM_PROCS_PER_GPU) at load.
// A plain function pointer: registering it does no work and touches no CUDA. The source
// answers 0 while it does not know (yet), and caches its answer once it does.
using memory_sharers_source = unsigned (*)() noexcept;
void set_memory_sharers_source(memory_sharers_source source) noexcept;

// The divisor of the rule: the registered source's answer, 1 when it has none (no source: the
// engine alone, tests; 0: not known yet). The source may initialise CUDA: call this only where
// device memory is about to be sized. Thread-safe; never throws.
unsigned memory_sharers() noexcept;

// Why a call of `caller` on `stream` needing `bytes` of workspace would be refused by the
// limits above, as a static string for logs ("workspace cap", "graph capture before the
// workspace is ready", "device memory: workspace over 90% of free", or "... over this
// process's share of free" when processes share the GPU), or nullptr (also when
// the workspace already holds `bytes`: no growth, nothing to refuse). Lets the interposer go
// native up front, quietly, instead of failing inside the call; on a stream under capture
// this matters, since creating a context or growing a workspace is not capturable. Never
// creates anything.
const char* workspace_refusal(cublasHandle_t caller, cudaStream_t stream, size_t bytes);

// The workspace a batch may size its chunks by (the batched engine, the packed copies of
// pointer-array batches): the cap when one is set; else a quarter of the device memory free now
// (the caller's own work and the engine's workspace need room beside it); 1 GiB while `stream`
// is being captured (the library then asks CUDA nothing but stream work) or when the free memory
// cannot be read. The chunk's workspace then still passes the limits above when it grows.
size_t batch_workspace_budget(cudaStream_t stream) noexcept;

// Drops every context of `caller`; memory is freed once pending work on it completes.
void release_contexts(cublasHandle_t caller);

}  // namespace ozdgemm::detail
