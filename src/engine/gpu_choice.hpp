// The moduli count chosen on the GPU, with no host synchronisation (the certified default of
// device calls). The chooser kernel writes s into the workspace; the kernels that depend on s
// (exponents, residues, CRT) read it there; what the host cannot launch without knowing s, the
// INT8 GEMMs of each count and the native DGEMM of a call that no s serves, sits in CUDA graph
// conditional nodes: a SWITCH on s whose body s holds the GEMMs of s moduli, and an IF on
// s == 0 whose body holds cublasDgemm. A kernel sets each node's value from s, so every replay
// of a captured call chooses again from the data it finds.
//
// On a stream under capture the nodes go into the caller's graph. Otherwise they form a small
// graph launched on the stream, cached per context: the GEMM graphs by what their bodies read
// (workspace addresses and shape), which the caller's pointers do not change; the native graph
// by the call's arguments, re-captured and updated in place when they change.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/moduli.hpp"

namespace ozdgemm::detail {

// Where the certified count of an eager call that may choose on the GPU
// (device_gemm::choose_on_gpu) is chosen; a stream under capture always uses the graphs below.
//   speculate: the default; a speculated count checked on the GPU, no wait
//   (engine/speculation.hpp); host: the host chooses after one wait per call (OZDGEMM_CHOICE=host);
//   graphs: the conditional graphs below, captured inside the eager call. Tests and measurements
//     only (set_gpu_choice_everywhere): a device synchronisation in another thread during a
//     capture crashes the driver (docs/default.md).
enum class eager_choice_kind { speculate, host, graphs };
// OZDGEMM_CHOICE: null or "gpu" -> speculate, "host" -> host, anything else -> speculate after
// one warning.
eager_choice_kind eager_choice_from_env_value(const char* value) noexcept;
// The process-wide answer: the override's, else OZDGEMM_CHOICE read once.
eager_choice_kind eager_choice() noexcept;
// For tests and measurements: graphs (on) or host (off) for the rest of the process, and undo
// that (back to OZDGEMM_CHOICE).
void set_gpu_choice_everywhere(bool on) noexcept;
void clear_gpu_choice_override() noexcept;

// One context's streams, cached graphs and tally. Not thread-safe: used under the context's lock.
class gpu_choice_graphs {
 public:
  gpu_choice_graphs();  // also puts the CRT's tables on the current device
  ~gpu_choice_graphs();
  gpu_choice_graphs(const gpu_choice_graphs&) = delete;
  gpu_choice_graphs& operator=(const gpu_choice_graphs&) = delete;

  // Work enqueued into a conditional body: `body_stream` is being captured (the graph becomes a
  // child graph of the body), and `handle` (the context's private cuBLAS handle) is bound to it.
  using body_work = std::function<void(cudaStream_t body_stream)>;

  // The GEMMs of s moduli for body s, s in [kMinModuli, kMaxModuli].
  using gemm_bodies = std::function<void(int s, cudaStream_t body_stream)>;

  // Each conditional comes in two steps. ready_*, before anything of the call is enqueued,
  // makes (or finds) the executable graph of `key`, which names everything it reads and does;
  // false when CUDA cannot make it (why: unusable_reason()): the call must then choose on the
  // host. On a stream under capture it makes nothing and answers true. enqueue_*, after the
  // work already on `stream`: on a stream under capture the conditional node goes into the
  // caller's graph, otherwise the prepared graph is launched.
  //
  // Whether ready_count_switch has nothing to make for `key` (made already, or under capture).
  bool has_count_switch(cudaStream_t stream, const std::string& key) const;
  //   SWITCH on *chosen, body s = gemms(s). GEMM bodies read the workspace only, so the key
  //   does not name the caller's pointers and the graph serves every call of that shape.
  bool ready_count_switch(cudaStream_t stream, cublasHandle_t handle, const int* chosen,
                          const std::string& key, const gemm_bodies& gemms);
  void enqueue_count_switch(cudaStream_t stream, cublasHandle_t handle, const int* chosen,
                            const std::string& key, const gemm_bodies& gemms);
  //   IF *chosen == 0, native(). One graph, updated in place when the call's arguments change.
  bool ready_native_if(cudaStream_t stream, cublasHandle_t handle, const int* chosen,
                       const std::string& key, const body_work& native);
  void enqueue_native_if(cudaStream_t stream, cublasHandle_t handle, const int* chosen,
                         const std::string& key, const body_work& native);
  const std::string& unusable_reason() const { return unusable_; }

  // Device address of the tally: [kMaxModuli + 1] counters of the chosen s (0: native), in
  // mapped host memory, so that the exit summary reads them without a copy.
  unsigned long long* tally_device() const { return tally_dev_; }
  // What the GPU has counted so far.
  void read_tally(unsigned long long (&out)[kMaxModuli + 1]) const;

 private:
  struct cached {
    cudaGraphExec_t exec = nullptr;
  };
  // One conditional node after the work on `capturing` (a stream under capture): its value set
  // by a kernel from *chosen, `bodies` bodies, body b filled by fill(b, stream) when wanted(b).
  void add_conditional(cudaStream_t capturing, cublasHandle_t handle, const int* chosen,
                       bool count_switch, unsigned bodies, const std::function<bool(unsigned)>& wanted,
                       const std::function<void(unsigned, cudaStream_t)>& fill);
  // What build() enqueues on the build stream, as a graph; and that graph made executable (and
  // destroyed).
  cudaGraph_t capture(const std::function<void(cudaStream_t)>& build);
  cudaGraphExec_t instantiate(cudaGraph_t graph);

  cudaStream_t build_ = nullptr;  // captures the graphs launched on the caller's stream
  cudaStream_t body_ = nullptr;   // captures conditional bodies
  std::map<std::string, cached> gemm_graphs_;
  std::string native_key_;
  cudaGraphExec_t native_graph_ = nullptr;
  std::string unusable_;
  unsigned long long* tally_host_ = nullptr;
  unsigned long long* tally_dev_ = nullptr;
};

// The sum of every context's tally, released ones included (engine/handle_context.cpp holds the
// contexts).
void read_gpu_choice_tally(unsigned long long (&out)[kMaxModuli + 1]);
// Adds the tallies of the contexts released so far to `out`.
void add_released_tallies(unsigned long long (&out)[kMaxModuli + 1]);

}  // namespace ozdgemm::detail
