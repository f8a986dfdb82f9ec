#include "engine/handle_context.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/cublas_api.hpp"
#include "common/error.hpp"
#include "common/fault_injection.hpp"
#include "common/logging.hpp"

namespace ozdgemm::detail {
namespace {

std::atomic<size_t> cap_bytes{0};

[[noreturn]] void refuse(const std::string& why) {
  throw cuda_error(cudaErrorMemoryAllocation, "workspace refused: " + why);
}

std::string mib(size_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

}  // namespace

void set_workspace_cap(size_t bytes) noexcept { cap_bytes.store(bytes); }
size_t workspace_cap() noexcept { return cap_bytes.load(); }

bool within_free_memory(size_t need, size_t held, size_t free_bytes, unsigned sharers) noexcept {
  const size_t available = free_bytes > SIZE_MAX - held ? SIZE_MAX : free_bytes + held;
  return need <= available / 10 * 9 / (sharers == 0 ? 1 : sharers);
}

namespace {

std::atomic<memory_sharers_source> sharers_source{nullptr};

// The rule's share, for the refusal message.
std::string share_of(unsigned sharers) {
  return sharers == 1 ? "90%" : "90% / " + std::to_string(sharers) + " processes sharing the GPU";
}

}  // namespace

void set_memory_sharers_source(memory_sharers_source source) noexcept {
  sharers_source.store(source);
}

unsigned memory_sharers() noexcept {
  const memory_sharers_source source = sharers_source.load();
  const unsigned n = source != nullptr ? source() : 0;  // the source caches; 0 may change
  return n == 0 ? 1 : n;
}

handle_context::handle_context(int device) : device_(device) {
  OZDGEMM_CUBLAS_TRY(cublas_create(&cublas_));
  const cudaError_t e = cudaEventCreateWithFlags(&done_, cudaEventDisableTiming);
  if (e != cudaSuccess) {
    cublas_destroy(cublas_);
    OZDGEMM_CUDA_TRY(e);
  }
  try {
    gpu_choice_ = std::make_unique<gpu_choice_graphs>();
  } catch (...) {
    cudaEventDestroy(done_);
    cublas_destroy(cublas_);
    throw;
  }
}

handle_context::~handle_context() {
  // The caller's current device is restored: releasing a context has no visible side effect.
  int current = device_;
  OZDGEMM_CUDA_TRY_NOTHROW(cudaGetDevice(&current));
  if (current != device_) OZDGEMM_CUDA_TRY_NOTHROW(cudaSetDevice(device_));
  // Free stream-ordered after the last call (a failed one included), so pending kernels never
  // see freed memory.
  if (ws_ != nullptr)
    OZDGEMM_CUDA_TRY_NOTHROW(cudaFreeAsync(ws_, open_ && !capturing_ ? stream_ : last_stream_));
  if (done_ != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaEventDestroy(done_));
  if (choice_event_ != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaEventDestroy(choice_event_));
  if (choice_stream_ != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaStreamDestroy(choice_stream_));
  gpu_choice_.reset();  // on this context's device
  if (cublas_ != nullptr) cublas_destroy(cublas_);
  if (current != device_) OZDGEMM_CUDA_TRY_NOTHROW(cudaSetDevice(current));
}

cudaEvent_t handle_context::choice_event() {
  if (choice_event_ == nullptr)
    OZDGEMM_CUDA_TRY(cudaEventCreateWithFlags(&choice_event_, cudaEventDisableTiming));
  return choice_event_;
}

cudaStream_t handle_context::choice_stream() {
  if (choice_stream_ == nullptr)
    OZDGEMM_CUDA_TRY(cudaStreamCreateWithFlags(&choice_stream_, cudaStreamNonBlocking));
  return choice_stream_;
}

void handle_context::begin(cudaStream_t stream) {
  if (open_) {
    // The previous call threw after enqueueing work on stream_: what it enqueued may still be
    // using the workspace. Close it here so this call orders after all of it (a captured call
    // left its work in a graph: nothing to order). Should that stream be gone (the caller
    // destroyed it), wait for the device instead: an error path after an error path.
    open_ = false;
    if (!capturing_) {
      if (cudaEventRecord(done_, stream_) == cudaSuccess) {
        last_stream_ = stream_;
        used_ = true;
      } else {
        (void)cudaGetLastError();
        OZDGEMM_CUDA_TRY(cudaDeviceSynchronize());
        used_ = false;
      }
    }
  }
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  OZDGEMM_CUDA_TRY(cudaStreamIsCapturing(stream, &capture));
  capturing_ = capture != cudaStreamCaptureStatusNone;
  // A captured call is ordered by whoever launches the graph, not by the event (which cannot
  // tie a graph to eager work): no wait here, and end() leaves the event alone.
  if (used_ && stream != last_stream_ && !capturing_)
    OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(stream, done_, 0));
  stream_ = stream;
  open_ = true;
  OZDGEMM_CUBLAS_TRY(cublas_set_stream(cublas_, stream));
}

void* handle_context::workspace(size_t bytes) {
  if (bytes <= ws_bytes_) return ws_;
  // Grow by at least 1/4 so a slowly growing sequence of shapes reallocates rarely.
  size_t want = bytes > ws_bytes_ + ws_bytes_ / 4 ? bytes : ws_bytes_ + ws_bytes_ / 4;
  const size_t cap = workspace_cap();
  if (cap != 0 && bytes > cap)
    refuse("workspace cap: the call needs " + mib(bytes) + ", OZDGEMM_MAX_WORKSPACE allows " +
           mib(cap));
  if (cap != 0 && want > cap) want = cap;
  if (capturing_)
    refuse("the workspace would have to grow to " + mib(bytes) +
           " while the stream is being captured (make one call before capturing)");
  size_t free_bytes = 0, total_bytes = 0;
  OZDGEMM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  // What this workspace already holds comes back before the new one is taken.
  const unsigned sharers = memory_sharers();
  if (!within_free_memory(bytes, ws_bytes_, free_bytes, sharers))
    refuse("the call needs " + mib(bytes) + ", more than " + share_of(sharers) + " of the " +
           mib(free_bytes + ws_bytes_) + " of device memory free");
  if (!within_free_memory(want, ws_bytes_, free_bytes, sharers)) want = bytes;
  if (inject_fault(fault::alloc))
    throw cuda_error(cudaErrorMemoryAllocation, "injected fault: workspace allocation failed");
  if (ws_ != nullptr) {
    OZDGEMM_CUDA_TRY(cudaFreeAsync(ws_, stream_));
    ws_ = nullptr;
    ws_bytes_ = 0;
  }
  const cudaError_t e = cudaMallocAsync(&ws_, want, stream_);
  if (e != cudaSuccess) {
    // An allocation failure is not sticky, but it stays the runtime's "last error": clear it so
    // the next call's launch checks do not report it as theirs.
    (void)cudaGetLastError();
    ws_ = nullptr;
    OZDGEMM_CUDA_TRY(e);
  }
  ws_bytes_ = want;
  logger().debug("workspace grown to {} MiB on device {}", want >> 20, device_);
  return ws_;
}

void handle_context::end() {
  open_ = false;
  if (capturing_) return;
  OZDGEMM_CUDA_TRY(cudaEventRecord(done_, stream_));
  last_stream_ = stream_;
  used_ = true;
}

namespace {

std::mutex registry_mutex;
using registry_map = std::map<std::pair<cublasHandle_t, int>, std::shared_ptr<handle_context>>;

// Leaked on purpose: contexts must not be destroyed by static destructors after the CUDA
// runtime has started unloading.
registry_map& registry() {
  static auto* r = new registry_map();
  return *r;
}

}  // namespace

std::shared_ptr<handle_context> context_for(cublasHandle_t caller) {
  int device = 0;
  OZDGEMM_CUDA_TRY(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto& slot = registry()[{caller, device}];
  if (!slot) slot = std::make_shared<handle_context>(device);
  return slot;
}

namespace {

// Bytes the workspace of `caller`'s context on the current device holds (0: no context).
size_t held_bytes(cublasHandle_t caller) {
  int device = 0;
  OZDGEMM_CUDA_TRY(cudaGetDevice(&device));
  std::shared_ptr<handle_context> ctx;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    auto& r = registry();
    const auto it = r.find({caller, device});
    if (it == r.end() || !it->second) return 0;
    ctx = it->second;
  }
  std::lock_guard<std::mutex> lock(ctx->mutex());
  return ctx->workspace_bytes();
}

}  // namespace

const char* workspace_refusal(cublasHandle_t caller, cudaStream_t stream, size_t bytes) {
  const size_t held = held_bytes(caller);
  if (held >= bytes) return nullptr;  // no growth: nothing to refuse
  // The same rules, in the same order, as handle_context::workspace().
  const size_t cap = workspace_cap();
  if (cap != 0 && bytes > cap) return "workspace cap";
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
    (void)cudaGetLastError();
    return "stream capture state unknown";
  }
  if (capture != cudaStreamCaptureStatusNone) return "graph capture before the workspace is ready";
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;  // the call itself will find out and fall back
  }
  const unsigned sharers = memory_sharers();
  if (!within_free_memory(bytes, held, free_bytes, sharers))
    return sharers == 1 ? "device memory: workspace over 90% of free"
                        : "device memory: workspace over this process's share of free";
  return nullptr;
}

size_t batch_workspace_budget(cudaStream_t stream) noexcept {
  const size_t cap = workspace_cap();
  if (cap != 0) return cap;
  constexpr size_t kUnknown = size_t{1} << 30;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
    (void)cudaGetLastError();
    return kUnknown;
  }
  if (capture != cudaStreamCaptureStatusNone) return kUnknown;
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return kUnknown;
  }
  return free_bytes / 4;
}

void read_gpu_choice_tally(unsigned long long (&out)[kMaxModuli + 1]) {
  for (auto& c : out) c = 0;
  std::lock_guard<std::mutex> lock(registry_mutex);
  for (const auto& [key, ctx] : registry()) {
    if (!ctx) continue;
    unsigned long long one[kMaxModuli + 1];
    ctx->gpu_choice().read_tally(one);  // mapped memory: no lock of the context needed
    for (int s = 0; s <= kMaxModuli; ++s) out[s] += one[s];
  }
  add_released_tallies(out);
}

void release_contexts(cublasHandle_t caller) {
  // Destroyed after the registry lock is released: a context's destructor calls CUDA and cuBLAS,
  // which have no business under the registry lock. (Its private cuBLAS handle goes straight to
  // libcublas, common/cublas_api.hpp, not through the library's own cublasDestroy hook.)
  std::vector<std::shared_ptr<handle_context>> released;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    auto& r = registry();
    for (auto it = r.begin(); it != r.end();) {
      if (it->first.first == caller) {
        released.push_back(std::move(it->second));
        it = r.erase(it);
      } else {
        ++it;
      }
    }
  }
}

}  // namespace ozdgemm::detail
