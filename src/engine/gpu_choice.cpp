#include "engine/gpu_choice.hpp"

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "batch_gather.cuh"
#include "choice.cuh"
#include "common/cublas_api.hpp"
#include "common/env.hpp"
#include "common/error.hpp"
#include "common/logging.hpp"
#include "common/stream_capture.hpp"
#include "crt.cuh"
#include "fallback_gemm.cuh"
#include "residues.cuh"
#include "small_trsm.cuh"

namespace ozdgemm::detail {
namespace {

// The cached GEMM graphs of one context: one per shape (and workspace); a process with more
// shapes than this drops them all. (An executable graph destroyed while in flight is freed when
// it completes.)
constexpr size_t kMaxGemmGraphs = 64;

// The tallies of contexts already released (their handles destroyed), for the exit summary.
std::atomic<unsigned long long> released_tally[kMaxModuli + 1];

// A graph captured from `stream`, which nothing else captures: `build` enqueues the work. If it
// throws, the capture is ended and dropped (the stream is usable again) and the error passes on.
cudaGraph_t capture_on(cudaStream_t stream, const std::function<void(cudaStream_t)>& build) {
  OZDGEMM_CUDA_TRY(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    build(stream);
  } catch (...) {
    cudaGraph_t g = nullptr;
    (void)cudaStreamEndCapture(stream, &g);
    if (g != nullptr) (void)cudaGraphDestroy(g);
    (void)cudaGetLastError();
    throw;
  }
  cudaGraph_t graph = nullptr;
  OZDGEMM_CUDA_TRY(cudaStreamEndCapture(stream, &graph));
  return graph;
}

}  // namespace

gpu_choice_graphs::gpu_choice_graphs() {
  OZDGEMM_CUDA_TRY(cudaStreamCreateWithFlags(&build_, cudaStreamNonBlocking));
  OZDGEMM_CUDA_TRY(cudaStreamCreateWithFlags(&body_, cudaStreamNonBlocking));
  OZDGEMM_CUDA_TRY(upload_chosen_tables(build_));
  // A speculated call, a pointer-array batch's packing or a TRSM's diagonal solve is often the
  // first to launch these, and must not wait for a lazy load.
  OZDGEMM_CUDA_TRY(load_choice_kernels());
  OZDGEMM_CUDA_TRY(load_chosen_crt_kernels());
  OZDGEMM_CUDA_TRY(load_fallback_kernels());
  OZDGEMM_CUDA_TRY(load_batch_gather_kernels());
  OZDGEMM_CUDA_TRY(load_residue_band_kernels());
  OZDGEMM_CUDA_TRY(load_small_trsm_kernels());
  OZDGEMM_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&tally_host_),
                                 sizeof(unsigned long long) * (kMaxModuli + 1),
                                 cudaHostAllocMapped));
  std::memset(tally_host_, 0, sizeof(unsigned long long) * (kMaxModuli + 1));
  OZDGEMM_CUDA_TRY(cudaHostGetDevicePointer(reinterpret_cast<void**>(&tally_dev_), tally_host_, 0));
}

gpu_choice_graphs::~gpu_choice_graphs() {
  // Graphs in flight are freed when they complete.
  if (tally_host_ != nullptr) {
    unsigned long long t[kMaxModuli + 1];
    read_tally(t);
    for (int s = 0; s <= kMaxModuli; ++s) released_tally[s] += t[s];
  }
  for (auto& [key, g] : gemm_graphs_) OZDGEMM_CUDA_TRY_NOTHROW(cudaGraphExecDestroy(g.exec));
  if (native_graph_ != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaGraphExecDestroy(native_graph_));
  if (tally_host_ != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaFreeHost(tally_host_));
  if (build_ != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaStreamDestroy(build_));
  if (body_ != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaStreamDestroy(body_));
}

void gpu_choice_graphs::read_tally(unsigned long long (&out)[kMaxModuli + 1]) const {
  for (int s = 0; s <= kMaxModuli; ++s)
    out[s] = static_cast<volatile unsigned long long*>(tally_host_)[s];
}

void gpu_choice_graphs::add_conditional(cudaStream_t capturing, cublasHandle_t handle,
                                        const int* chosen, bool count_switch, unsigned bodies,
                                        const std::function<bool(unsigned)>& wanted,
                                        const std::function<void(unsigned, cudaStream_t)>& fill) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  OZDGEMM_CUDA_TRY(cudaStreamGetCaptureInfo(capturing, &status, nullptr, &graph));
  cudaGraphConditionalHandle cond = 0;
  OZDGEMM_CUDA_TRY(cudaGraphConditionalHandleCreate(&cond, graph, 0, cudaGraphCondAssignDefault));
  launch_set_condition(
      cond, chosen, count_switch ? chosen_condition::count : chosen_condition::native, capturing);
  OZDGEMM_CHECK_LAUNCH();
  const cudaGraphNode_t* deps = nullptr;
  size_t ndeps = 0;
  OZDGEMM_CUDA_TRY(
      cudaStreamGetCaptureInfo(capturing, &status, nullptr, &graph, &deps, nullptr, &ndeps));
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = cond;
  params.conditional.type = count_switch ? cudaGraphCondTypeSwitch : cudaGraphCondTypeIf;
  params.conditional.size = bodies;
  cudaGraphNode_t node = nullptr;
  OZDGEMM_CUDA_TRY(cudaGraphAddNode(&node, graph, deps, nullptr, ndeps, &params));
  OZDGEMM_CUDA_TRY(cudaStreamUpdateCaptureDependencies(capturing, &node, nullptr, 1,
                                                       cudaStreamSetCaptureDependencies));
  // The bodies: the private handle follows the body stream, then returns to the call's stream.
  struct rebind {
    cublasHandle_t h;
    cudaStream_t back;
    ~rebind() { (void)cublas_set_stream(h, back); }
  } restore{handle, nullptr};
  OZDGEMM_CUBLAS_TRY(cublas_get_stream(handle, &restore.back));
  OZDGEMM_CUBLAS_TRY(cublas_set_stream(handle, body_));
  // No cuBLAS workspace in a body: what cuBLAS does with one (split-k reductions) is not allowed
  // in a conditional body. The INT8 GEMMs run on cuBLASLt with the call's own workspace
  // (lt_use::in_graph_body). Binding the stream again afterwards restores the default one.
  OZDGEMM_CUBLAS_TRY(cublas_set_workspace(handle, nullptr, 0));
  // Each body is captured on its own and added to the node's body as a child graph, rather
  // than captured into it (cudaStreamBeginCaptureToGraph): a capture can be invalidated by what
  // other threads do meanwhile, and once a body captured into its node had failed half-way,
  // ending the enclosing capture crashed inside the driver (H200, driver 580.159.04). A failed
  // body now leaves the node's bodies untouched.
  for (unsigned b = 0; b < bodies; ++b) {
    if (!wanted(b)) continue;
    const cudaGraph_t work = capture_on(body_, [&](cudaStream_t body) { fill(b, body); });
    cudaGraphNode_t child = nullptr;
    const cudaError_t e =
        cudaGraphAddChildGraphNode(&child, params.conditional.phGraph_out[b], nullptr, 0, work);
    (void)cudaGraphDestroy(work);  // the node holds a copy
    OZDGEMM_CUDA_TRY(e);
  }
}

cudaGraph_t gpu_choice_graphs::capture(const std::function<void(cudaStream_t)>& build) {
  return capture_on(build_, build);
}

cudaGraphExec_t gpu_choice_graphs::instantiate(cudaGraph_t graph) {
  cudaGraphExec_t exec = nullptr;
  const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  OZDGEMM_CUDA_TRY(e);
  return exec;
}

namespace {

constexpr unsigned kCountBodies = kMaxModuli + 1;  // body s for s = 0..20; 0 and 1 stay empty

bool count_body(unsigned b) { return b >= static_cast<unsigned>(kMinModuli); }

}  // namespace

bool gpu_choice_graphs::has_count_switch(cudaStream_t stream, const std::string& key) const {
  return stream_capturing(stream) || gemm_graphs_.count(key) != 0;
}

bool gpu_choice_graphs::ready_count_switch(cudaStream_t stream, cublasHandle_t handle,
                                           const int* chosen, const std::string& key,
                                           const gemm_bodies& gemms) {
  // Under capture the node goes into the caller's graph, which the caller instantiates: nothing
  // is made here (nothing that could disturb the capture).
  if (has_count_switch(stream, key)) return true;
  try {
    if (gemm_graphs_.size() >= kMaxGemmGraphs) {
      for (auto& [k, g] : gemm_graphs_) OZDGEMM_CUDA_TRY(cudaGraphExecDestroy(g.exec));
      gemm_graphs_.clear();
    }
    auto fill = [&](unsigned b, cudaStream_t body) { gemms(static_cast<int>(b), body); };
    const cudaGraphExec_t exec = instantiate(capture([&](cudaStream_t build) {
      add_conditional(build, handle, chosen, true, kCountBodies, count_body, fill);
    }));
    gemm_graphs_.emplace(key, cached{exec});
    return true;
  } catch (const std::exception& e) {
    unusable_ = std::string("SWITCH of the INT8 GEMMs: ") + e.what();
    return false;
  }
}

void gpu_choice_graphs::enqueue_count_switch(cudaStream_t stream, cublasHandle_t handle,
                                             const int* chosen, const std::string& key,
                                             const gemm_bodies& gemms) {
  if (stream_capturing(stream)) {
    auto fill = [&](unsigned b, cudaStream_t body) { gemms(static_cast<int>(b), body); };
    add_conditional(stream, handle, chosen, true, kCountBodies, count_body, fill);
    return;
  }
  OZDGEMM_CUDA_TRY(cudaGraphLaunch(gemm_graphs_.at(key).exec, stream));
}

bool gpu_choice_graphs::ready_native_if(cudaStream_t stream, cublasHandle_t handle,
                                        const int* chosen, const std::string& key,
                                        const body_work& native) {
  if (stream_capturing(stream) || (native_graph_ != nullptr && key == native_key_)) return true;
  try {
    auto fill = [&](unsigned, cudaStream_t body) { native(body); };
    cudaGraph_t graph = capture([&](cudaStream_t build) {
      add_conditional(
          build, handle, chosen, false, 1, [](unsigned) { return true; }, fill);
    });
    // Same topology, other arguments: update the executable graph in place (a launch in flight
    // keeps the old parameters); otherwise a new one (the old one is freed once it completes).
    cudaGraphExecUpdateResultInfo info{};
    if (native_graph_ != nullptr &&
        cudaGraphExecUpdate(native_graph_, graph, &info) == cudaSuccess) {
      (void)cudaGraphDestroy(graph);
    } else {
      (void)cudaGetLastError();
      if (native_graph_ != nullptr) OZDGEMM_CUDA_TRY(cudaGraphExecDestroy(native_graph_));
      native_graph_ = nullptr;
      native_key_.clear();
      native_graph_ = instantiate(graph);
    }
    native_key_ = key;
    return true;
  } catch (const std::exception& e) {
    unusable_ = std::string("IF of native DGEMM: ") + e.what();
    return false;
  }
}

void gpu_choice_graphs::enqueue_native_if(cudaStream_t stream, cublasHandle_t handle,
                                          const int* chosen, const std::string& key,
                                          const body_work& native) {
  if (stream_capturing(stream)) {
    auto fill = [&](unsigned, cudaStream_t body) { native(body); };
    add_conditional(
        stream, handle, chosen, false, 1, [](unsigned) { return true; }, fill);
    return;
  }
  if (key != native_key_) throw std::logic_error("native graph not prepared for this call");
  OZDGEMM_CUDA_TRY(cudaGraphLaunch(native_graph_, stream));
}

void add_released_tallies(unsigned long long (&out)[kMaxModuli + 1]) {
  for (int s = 0; s <= kMaxModuli; ++s) out[s] += released_tally[s].load();
}

namespace {
// -1: not overridden; else an eager_choice_kind.
std::atomic<int> gpu_choice_override{-1};
}  // namespace

eager_choice_kind eager_choice_from_env_value(const char* value) noexcept {
  if (value == nullptr || std::strcmp(value, "gpu") == 0) return eager_choice_kind::speculate;
  if (std::strcmp(value, "host") == 0) return eager_choice_kind::host;
  try {
    logger().warn("OZDGEMM_CHOICE='{}' is invalid (expected gpu|host); using gpu", value);
  } catch (...) {
  }
  return eager_choice_kind::speculate;
}

eager_choice_kind eager_choice() noexcept {
  const int forced = gpu_choice_override.load();
  if (forced >= 0) return static_cast<eager_choice_kind>(forced);
  static const eager_choice_kind from_env =
      eager_choice_from_env_value(setting_env("OZDGEMM_CHOICE"));
  return from_env;
}

void set_gpu_choice_everywhere(bool on) noexcept {
  gpu_choice_override.store(
      static_cast<int>(on ? eager_choice_kind::graphs : eager_choice_kind::host));
}

void clear_gpu_choice_override() noexcept { gpu_choice_override.store(-1); }

}  // namespace ozdgemm::detail
