// Host-memory DGEMM on the GPU(s). Operands are packed by several threads (host_copy.hpp) into
// persistent pinned staging buffers and copied into persistent device buffers; the engine
// multiplies them exactly as it multiplies device calls, so C is bit-identical to
// ozdgemm_dgemm on the same data.
//
// Large calls are pipelined over tiles of C's columns (fast scaling only, see below):
//
//   host:     pack A | pack B0 | pack B1  unpack C0 | pack B2  unpack C1 | ...
//   copy in:    A      B0        B1                  B2
//   compute:                 C0 (A prepared)  C1 (A reused)  C2 ...
//   copy out:                              C0                 C1 ...
//
// so that after A has crossed, the GPU multiplies one tile while the next tile's B comes in
// and the previous tile's C goes out. A's scaling and residues are computed once, on the first
// tile, and reused (device_gemm::reuse_a): with fast scaling every row's exponent depends on
// that row alone, so the tiles compute exactly what one call over all columns computes.
// Accurate scaling's row exponents depend on all of B, so there the call is one tile, and only
// the packing overlaps the copies. So is a call with OZDGEMM_MODULI=auto: the moduli count is
// chosen per call from the statistics of all of A and B (engine/emulate.cpp), which a tile
// does not see; the one worker then chooses exactly what ozdgemm_dgemm chooses on the same
// data, or declines, and the caller runs the CPU BLAS.
//
// Several GPUs (OZDGEMM_DEVICES), or several workers on one GPU
// (OZDGEMM_HOST_WORKERS_PER_DEVICE): each worker is the pipeline above with its own streams,
// staging, device buffers, cuBLAS handle and packing threads. Each prepares A on its GPU once,
// then takes column tiles from one tile_queue as it gets free (dynamic: a shared or slower GPU
// takes fewer). By the argument above, any assignment of tiles gives the bits of one worker.
// One worker is the caller's thread running the same pipeline in the same order as before.
//
// If a worker fails, the columns of C it already wrote are final; it gives the rest of its
// tiles back to the queue and retires, and the other workers take them. Whatever no worker
// finishes is returned to the caller, which computes it on the CPU BLAS.
#include "host_path/offload.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/error.hpp"
#include "common/logging.hpp"
#include "core/checked_math.hpp"
#include "core/moduli.hpp"
#include "engine/emulate.hpp"
#include "engine/handle_context.hpp"
#include "dispatch/call_log.hpp"
#include "dispatch/settings.hpp"
#include "dispatch/decision.hpp"
#include "dispatch/device_select.hpp"
#include "host_path/host_copy.hpp"
#include "dispatch/process_state.hpp"

namespace ozdgemm::detail {
namespace {

constexpr int64_t kChunk = int64_t{8} << 20;  // elements per staging buffer (64 MiB)

// Restores the caller's current device on every exit path.
class device_guard {
 public:
  explicit device_guard(int device) {
    OZDGEMM_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) OZDGEMM_CUDA_TRY(cudaSetDevice(device));
  }
  ~device_guard() { cudaSetDevice(previous_); }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = 0;
};

// Grow-only device or pinned host array of doubles.
template <bool Pinned>
struct grow_array {
  double* ptr = nullptr;
  int64_t count = 0;
  void reserve(int64_t n) {
    if (n <= count) return;
    release();
    void* p = nullptr;
    size_t bytes = 0;
    if (!checked_bytes(n, sizeof(double), &bytes)) throw std::bad_alloc();
    cudaError_t e = Pinned ? cudaMallocHost(&p, bytes) : cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky; keep later launch checks clean
      OZDGEMM_CUDA_TRY(e);
    }
    ptr = static_cast<double*>(p);
    count = n;
  }
  void release() {
    if (ptr != nullptr) {
      if (Pinned) cudaFreeHost(ptr);
      else cudaFree(ptr);
    }
    ptr = nullptr;
    count = 0;
  }
};

cudaEvent_t new_event() {
  cudaEvent_t e = nullptr;
  OZDGEMM_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

// Columns of C per tile. Tiles only in fast scaling with a fixed moduli count (see the file
// comment). Wide calls get
// up to eight tiles of at least 2048 columns: narrower tiles cost more in per-tile GEMM
// efficiency and launch overhead than they gain in overlap. Measured on the H200, s = 16
// (bench/results/2026-11-29_h200_25a1312_host_tiles): n = 8192 took 42.7 / 47.7 / 60.9 ms with
// tiles of 2048 / 1024 / 512 columns, n = 16384 took 175 / 175 / 223 ms. With more than two
// workers, up to four tiles per worker, so that the dynamic hand-out can still balance them
// (one or two workers: eight tiles, as measured).
int64_t tile_columns(int64_t n, scaling_mode mode, bool automatic, long long configured,
                     int workers) {
  if (mode != scaling_mode::fast || automatic) return n;
  if (configured > 0) return std::min<int64_t>(n, configured);
  const int64_t tiles = std::max<int64_t>(8, int64_t{4} * workers);
  return std::min<int64_t>(n, std::max<int64_t>(2048, round_up((n + tiles - 1) / tiles, 256)));
}

// The test-only failure of OZDGEMM_HOST_FAIL_AFTER, for one call.
struct fail_plan {
  long long after = -1;  // tiles finished before the failure; -1: none
  int worker = -1;       // -1: every worker
  bool hits(int index, int64_t tiles_done) const {
    return after >= 0 && (worker < 0 || worker == index) && tiles_done == after;
  }
};

// One call as the workers see it.
struct host_job {
  const host_gemm* g;
  int num_moduli;  // kAutoModuli, kCertifiedModuli: chosen per call for `target` (one tile,
                   // one worker)
  accuracy_target target;
  scaling_mode mode;
  int64_t width;  // columns per tile (the queue's)
  fail_plan fail;
};

// One worker of the host path: a GPU (or a share of one) with its own streams, pinned
// staging, device buffers, cuBLAS handle and workspace, and packing threads. Host calls are
// serialised (they block the caller anyway), so a worker serves one call at a time, on one
// thread. Deliberately never destroyed: CUDA must not be called from static destructors.
class host_worker {
 public:
  // Constructed with `device` current (worker_at() sees to it).
  host_worker(int index, int device, int threads)
      : index_(index), device_(device), engine_(device), pool_(threads) {
    for (cudaStream_t* s : {&copy_in_, &compute_, &copy_out_})
      OZDGEMM_CUDA_TRY(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
    for (int i = 0; i < 2; ++i) {
      stage_in_[i].reserve(kChunk);
      stage_out_[i].reserve(kChunk);
      staged_in_[i] = new_event();
      staged_out_[i] = new_event();
      tile_in_[i] = new_event();
      computed_[i] = new_event();
    }
  }

  int index() const { return index_; }
  int device() const { return device_; }
  int threads() const { return pool_.threads(); }
  int64_t tiles_done() const { return tiles_done_; }
  // The moduli count the last call ran with (auto: the chosen one), and why auto declined it
  // (empty when it did not; then no tile was multiplied and C is untouched).
  int ran_moduli() const { return ran_moduli_; }
  const std::string& declined() const { return declined_; }

  // Device bytes the job needs here (A, two B and two C tiles, the workspace), and those this
  // worker holds now (they are released before anything larger is taken).
  double need_bytes(const host_job& j) const {
    const host_gemm& g = *j.g;
    const double doubles = static_cast<double>(g.m) * g.k +
                           2.0 * (static_cast<double>(g.k) + g.m) * static_cast<double>(j.width);
    return 8.0 * doubles + static_cast<double>(emulation_workspace_bytes(
                               g.m, j.width, g.k, j.num_moduli, j.mode));
  }
  double held_bytes() const {
    return 8.0 * static_cast<double>(a_.count + b_[0].count + b_[1].count + c_[0].count +
                                     c_[1].count) +
           static_cast<double>(engine_.workspace_bytes());
  }

  // Takes tiles from q until none is left. If something fails, the tiles in hand go back to
  // the queue (the part of one already written to C stays done), nothing may still be copying
  // into buffers the next call reuses, and the exception propagates: the worker retires from
  // this call. Runs with device() current.
  void serve(const host_job& j, tile_queue& q) {
    tiles_done_ = 0;
    has_cur_ = has_next_ = false;
    written_ = 0;
    ran_moduli_ = 0;
    declined_.clear();
    try {
      pipeline(j, q);
    } catch (...) {
      for (cudaStream_t s : {copy_in_, compute_, copy_out_}) cudaStreamSynchronize(s);
      cudaGetLastError();
      // The tile taken ahead first, so that the one being written is first in line again.
      if (has_next_) q.give_back(next_);
      if (has_cur_) q.give_back(cur_, written_);
      has_cur_ = has_next_ = false;
      throw;
    }
  }

 private:
  using tile = tile_queue::tile;

  void pipeline(const host_job& j, tile_queue& q) {
    const host_gemm& g = *j.g;
    if (!q.take_or_wait(&cur_)) return;
    has_cur_ = true;
    const bool a_n = g.opa == op_kind::n;
    const host_block a_blk{g.a, g.lda, a_n ? g.m : g.k, a_n ? g.k : g.m};

    a_.reserve(g.m * g.k);
    for (int i = 0; i < 2 && i < q.tiles(); ++i) {
      b_[i].reserve(g.k * j.width);
      c_[i].reserve(g.m * j.width);
    }
    // Whole columns per download chunk, so a failure never leaves a column half written.
    cols_out_ = std::max<int64_t>(1, kChunk / g.m);
    for (auto& s : stage_out_) s.reserve(cols_out_ * g.m);

    clock_ = {};
    const auto t0 = std::chrono::steady_clock::now();
    upload(a_blk, a_.ptr);
    const double a_s = elapsed(t0);
    bool used[2] = {false, false}, reuse_a = false;
    auto start = [&](const tile& t, int slot) {
      // The slot's previous tile must be multiplied before its B is overwritten.
      if (used[slot]) OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(copy_in_, computed_[slot]));
      upload_tile(g, t, slot);
      compute_tile(j, t, slot, reuse_a);  // A is prepared by the first tile, then reused
      used[slot] = true;
      reuse_a = true;
    };
    int slot = 0;
    start(cur_, slot);
    if (!declined_.empty()) {  // auto: one tile (tile_columns), nothing of C written
      q.give_back(cur_);
      has_cur_ = false;
      return;
    }
    // The tile after cur_ is taken, sent and multiplied before cur_ comes back: alone, this
    // worker runs the one-GPU pipeline in its order.
    for (;;) {
      has_next_ = q.take(&next_);
      if (has_next_) start(next_, slot ^ 1);
      download_tile(j, cur_, slot);
      q.done(cur_);
      has_cur_ = false;
      written_ = 0;
      ++tiles_done_;
      slot ^= 1;
      if (has_next_) {
        cur_ = next_;
        has_cur_ = true;
        has_next_ = false;
        continue;
      }
      // None waiting: another worker may still fail and give tiles back.
      if (!q.take_or_wait(&cur_)) break;
      has_cur_ = true;
      start(cur_, slot);
    }
    // Where the host's time went: packing and unpacking are the host-bound parts, waits are
    // time the GPU or the copies kept the host idle.
    logger().debug(
        "host path {}x{}x{}, worker {} (GPU {}): {} of {} tile(s) of {} columns, {} threads; "
        "A packed in {:.1f} ms; pack {:.1f} ms, unpack {:.1f} ms, waits {:.1f} ms, "
        "total {:.1f} ms",
        g.m, g.n, g.k, index_, device_, tiles_done_, q.tiles(), j.width, pool_.threads(),
        a_s * 1e3, clock_.pack_s * 1e3, clock_.unpack_s * 1e3, clock_.wait_s * 1e3,
        elapsed(t0) * 1e3);
  }

  static double elapsed(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  template <class F>
  static void timed(double* acc, F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    *acc += elapsed(t0);
  }

  // op(B)'s columns [j0, j0 + width) as stored: a k x width block (N) or width x k (T).
  static host_block b_block(const host_gemm& g, const tile& t) {
    if (g.opb == op_kind::n) return {g.b + t.j0 * g.ldb, g.ldb, g.k, t.width};
    return {g.b + t.j0, g.ldb, t.width, g.k};
  }

  void upload_tile(const host_gemm& g, const tile& t, int slot) {
    upload(b_block(g, t), b_[slot].ptr);
    if (g.beta != 0.0) upload({g.c + t.j0 * g.ldc, g.ldc, g.m, t.width}, c_[slot].ptr);
    OZDGEMM_CUDA_TRY(cudaEventRecord(tile_in_[slot], copy_in_));
  }

  void compute_tile(const host_job& j, const tile& t, int slot, bool reuse_a) {
    const host_gemm& g = *j.g;
    OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(compute_, tile_in_[slot]));
    const bool a_n = g.opa == op_kind::n, b_n = g.opb == op_kind::n;
    const gemm_problem p{g.m,
                         t.width,
                         g.k,
                         operand_a(g.opa, a_.ptr, a_n ? g.m : g.k),
                         operand_b(g.opb, b_[slot].ptr, b_n ? g.k : t.width),
                         c_[slot].ptr,
                         g.m};
    std::lock_guard<std::mutex> lock(engine_.mutex());
    engine_.begin(compute_);
    void* ws = engine_.workspace(emulation_workspace_bytes(g.m, t.width, g.k, j.num_moduli,
                                                           j.mode));
    device_gemm call{p, scalar_arg{nullptr, g.alpha}, scalar_arg{nullptr, g.beta}, j.num_moduli,
                     j.mode, compute_, engine_.cublas(), nullptr};
    call.reuse_a = reuse_a;
    call.target = j.target;
    moduli_choice choice;
    ran_moduli_ = enqueue_emulation(call, ws, &choice);  // auto: synchronises compute_
    engine_.end();
    if (ran_moduli_ == 0) {
      declined_ = choice.why.empty() ? std::string(kAutoModuliDeclined) : choice.why;
      return;
    }
    OZDGEMM_CUDA_TRY(cudaEventRecord(computed_[slot], compute_));
  }

  // Host block -> dense device array, through the two input staging buffers: the threads
  // pack one buffer while the other one's copy is in flight.
  void upload(const host_block& src, double* dev) {
    const int64_t total = src.rows * src.cols;
    for (int64_t first = 0; first < total; first += kChunk) {
      const int64_t count = std::min(kChunk, total - first);
      const int buf = next_in_;
      next_in_ ^= 1;
      timed(&clock_.wait_s, [&] { OZDGEMM_CUDA_TRY(cudaEventSynchronize(staged_in_[buf])); });
      timed(&clock_.pack_s, [&] { pack_range(pool_, src, first, count, stage_in_[buf].ptr); });
      OZDGEMM_CUDA_TRY(cudaMemcpyAsync(dev + first, stage_in_[buf].ptr,
                                       static_cast<size_t>(count) * sizeof(double),
                                       cudaMemcpyHostToDevice, copy_in_));
      OZDGEMM_CUDA_TRY(cudaEventRecord(staged_in_[buf], copy_in_));
    }
  }

  // OZDGEMM_HOST_FAIL_AFTER (test-only): this worker fails here.
  [[noreturn]] void injected_failure(const tile& t) const {
    logger().warn("injected fault: host path worker {} (GPU {}) fails after {} tile(s), {} of "
                  "the {} columns from {} written",
                  index_, device_, tiles_done_, written_, t.width, t.j0);
    throw cuda_error(cudaErrorUnknown, "injected fault: host path worker failure");
  }

  // Tile of C -> caller's C, whole columns per chunk through the two output staging buffers:
  // the next chunk's copy is in flight while the threads unpack this one. written_ counts the
  // columns of t that hold their final values.
  void download_tile(const host_job& j, const tile& t, int slot) {
    const host_gemm& g = *j.g;
    const bool fail = j.fail.hits(index_, tiles_done_);
    OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(copy_out_, computed_[slot]));
    const int64_t chunks = (t.width + cols_out_ - 1) / cols_out_;
    auto enqueue = [&](int64_t c) {
      const int64_t cols = std::min(cols_out_, t.width - c * cols_out_);
      OZDGEMM_CUDA_TRY(cudaMemcpyAsync(stage_out_[c % 2].ptr, c_[slot].ptr + c * cols_out_ * g.m,
                                       static_cast<size_t>(cols * g.m) * sizeof(double),
                                       cudaMemcpyDeviceToHost, copy_out_));
      OZDGEMM_CUDA_TRY(cudaEventRecord(staged_out_[c % 2], copy_out_));
    };
    enqueue(0);
    for (int64_t c = 0; c < chunks; ++c) {
      // Part way through the tile when it has several chunks: the partial give-back path.
      if (fail && (c == chunks / 2)) injected_failure(t);
      if (c + 1 < chunks) enqueue(c + 1);
      timed(&clock_.wait_s, [&] { OZDGEMM_CUDA_TRY(cudaEventSynchronize(staged_out_[c % 2])); });
      const int64_t j0 = t.j0 + c * cols_out_, cols = std::min(cols_out_, t.width - c * cols_out_);
      timed(&clock_.unpack_s, [&] {
        unpack_range(pool_, stage_out_[c % 2].ptr, {g.c + j0 * g.ldc, g.ldc, g.m, cols}, 0,
                     cols * g.m);
      });
      written_ = j0 + cols - t.j0;
    }
  }

  int index_;
  int device_;
  handle_context engine_;  // private cuBLAS handle and workspace, as for device calls
  copy_pool pool_;
  cudaStream_t copy_in_ = nullptr, compute_ = nullptr, copy_out_ = nullptr;
  grow_array<true> stage_in_[2], stage_out_[2];
  cudaEvent_t staged_in_[2] = {}, staged_out_[2] = {}, tile_in_[2] = {}, computed_[2] = {};
  grow_array<false> a_, b_[2], c_[2];
  int next_in_ = 0;
  int64_t cols_out_ = 1;
  // The call in progress: the tile being finished, the one taken ahead, and progress.
  tile cur_{}, next_{};
  bool has_cur_ = false, has_next_ = false;
  int64_t written_ = 0;
  int64_t tiles_done_ = 0;
  int ran_moduli_ = 0;
  std::string declined_;
  struct {
    double pack_s, unpack_s, wait_s;
  } clock_{};
};

// Why no GPU can serve host calls, or nullptr. Checked once.
const char* gpu_unavailable() {
  static const char* reason = []() -> const char* {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      logger().info("host calls stay on the CPU BLAS: no usable GPU ({})", cudaGetErrorString(e));
      return "no usable GPU";
    }
    if (count == 0) {
      logger().info("host calls stay on the CPU BLAS: no GPU present");
      return "no GPU present";
    }
    const device_list& l = host_devices();
    if (!l.devices.empty()) return nullptr;
    const config& cfg = settings();
    if (!cfg.all_devices && cfg.devices.empty()) {
      logger().warn("OZDGEMM_DEVICE={} but only {} GPU(s): host calls stay on the CPU BLAS",
                    host_device(), count);
      return "OZDGEMM_DEVICE out of range";
    }
    return "OZDGEMM_DEVICES: no listed GPU exists";  // device_select warned
  }();
  return reason;
}

// The workers: host_devices() x OZDGEMM_HOST_WORKERS_PER_DEVICE, GPU-major within a slot
// (worker i is on GPU devices[i mod D]), so that the first workers, those a narrow or
// memory-bound call uses, are on different GPUs. Each is created on first use and kept.
class worker_set {
 public:
  worker_set(const std::vector<int>& devices, int per_device, int threads)
      : devices_(devices), count_(static_cast<int>(devices.size()) * per_device),
        threads_(std::max(1, threads / std::max(1, count_))), slots_(count_) {}

  int count() const { return count_; }
  int device_of(int i) const { return devices_[static_cast<size_t>(i) % devices_.size()]; }

  // Worker i, or nullptr when it could not be created (logged once; *out_of_memory says
  // whether that was for want of memory). Not tried again: a run (bench/results/
  // 2026-11-29_h200_74dd0fc_session4) that re-tried a creation that had run out of memory once
  // a second, with 8 processes sharing 8 GiB, had the applications' own cuBLAS calls fail in 4
  // of 8 processes, against none without re-trying (bench/results/
  // 2026-11-29_h200_e743779_share_accuracy): the attempts take memory the others need.
  host_worker* at(int i, bool* out_of_memory) {
    slot& s = slots_[static_cast<size_t>(i)];
    std::call_once(s.once, [&] {
      const int device = device_of(i);
      try {
        device_guard guard(device);
        s.worker = new host_worker(i, device, threads_);
        if (count_ == 1)
          logger().info("host path on GPU {}: {} packing threads, {} MiB pinned staging", device,
                        s.worker->threads(), 4 * kChunk * sizeof(double) >> 20);
        else
          logger().info("host path worker {} of {} on GPU {}: {} packing threads, {} MiB pinned "
                        "staging",
                        i, count_, device, s.worker->threads(), 4 * kChunk * sizeof(double) >> 20);
      } catch (const std::exception& e) {
        // Running out of memory is a state of the machine, not a fault: warn, not error.
        s.out_of_memory = is_allocation_failure(e);
        const spdlog::level::level_enum level =
            s.out_of_memory ? spdlog::level::warn : spdlog::level::err;
        if (count_ == 1)
          logger().log(level, "host path unavailable: {}", e.what());
        else
          logger().log(level, "host path worker {} on GPU {} unavailable: {}", i, device,
                       e.what());
      }
    });
    *out_of_memory = s.out_of_memory;
    return s.worker;
  }

 private:
  struct slot {
    std::once_flag once;
    host_worker* worker = nullptr;
    bool out_of_memory = false;  // why worker is null, when it is
  };
  std::vector<int> devices_;
  int count_;
  int threads_;
  std::vector<slot> slots_;
};

// The workers, with OZDGEMM_HOST_THREADS (or its default for the GPUs listed) shared out.
worker_set& workers() {
  static worker_set* set = [] {
    const std::vector<int>& devices = host_devices().devices;
    const std::set<int> gpus(devices.begin(), devices.end());  // OZDGEMM_DEVICES=0,0 is one GPU
    const int threads = host_copy_threads(settings().host_threads, static_cast<int>(gpus.size()));
    // Leaked: see host_worker.
    return new worker_set(devices, settings().host_workers_per_device, threads);
  }();
  return *set;
}

// Host calls one at a time: they block their caller anyway, and the workers are shared.
std::mutex& host_calls() {
  static auto* m = new std::mutex();
  return *m;
}

// admit()'s reasons when no worker exists (creation failed; for want of memory): the call
// then counts as a fallback, not as a native decision.
constexpr const char* kNoWorkers = "host path unavailable";
constexpr const char* kNoMemoryForWorkers = "host path unavailable: out of device memory";

// Doubles to bytes for the memory rule, saturating (a call that large is refused anyway).
size_t to_bytes(double x) {
  return x >= static_cast<double>(SIZE_MAX / 2) ? SIZE_MAX / 2 : static_cast<size_t>(x);
}

// The workers that may run `j`: the first `wanted` of the set whose buffers fit the rules of
// device calls on their GPU, all of one GPU's workers together (engine/handle_context.hpp):
// OZDGEMM_MAX_WORKSPACE, and 90% of the free memory divided by the processes sharing the GPU
// (memory_sharers()), so that ranks sharing a GPU do not starve each other. Empty with *why set
// when none fits.
std::vector<host_worker*> admit(worker_set& set, int wanted, const host_job& j, const char** why) {
  struct gpu_budget {
    int device;
    size_t free_bytes;
    double need, held;
  };
  std::vector<gpu_budget> gpus;
  std::vector<host_worker*> crew;
  *why = kNoWorkers;
  for (int i = 0; i < set.count() && static_cast<int>(crew.size()) < wanted; ++i) {
    bool out_of_memory = false;
    host_worker* w = set.at(i, &out_of_memory);
    if (w == nullptr) {
      if (crew.empty() && out_of_memory) *why = kNoMemoryForWorkers;
      continue;
    }
    auto it = std::find_if(gpus.begin(), gpus.end(),
                           [&](const gpu_budget& b) { return b.device == w->device(); });
    if (it == gpus.end()) {
      device_guard guard(w->device());
      size_t free_bytes = 0, total = 0;
      if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
        (void)cudaGetLastError();
        if (crew.empty()) *why = "device memory unknown";
        continue;
      }
      gpus.push_back({w->device(), free_bytes, 0.0, 0.0});
      it = gpus.end() - 1;
    }
    const double need = it->need + w->need_bytes(j), held = it->held + w->held_bytes();
    if (workspace_cap() != 0 && need > static_cast<double>(workspace_cap())) {
      if (crew.empty()) *why = "workspace cap";
      continue;
    }
    const unsigned sharers = memory_sharers();
    if (!within_free_memory(to_bytes(need), to_bytes(held), it->free_bytes, sharers)) {
      if (crew.empty())
        *why = sharers == 1 ? "device memory: host path over 90% of free"
                            : "device memory: host path over this process's share of free";
      continue;
    }
    it->need = need;
    it->held = held;
    crew.push_back(w);
  }
  return crew;
}

// Runs worker w on j until the queue is empty or w fails (logged: its tiles went back).
void run_worker(host_worker* w, const host_job& j, tile_queue& q, const char* entry) noexcept {
  try {
    device_guard guard(w->device());
    w->serve(j, q);
  } catch (const std::exception& e) {
    try {
      logger().warn("{}: host path worker {} (GPU {}) failed after {} tile(s) ({}); its tiles go "
                    "back to the queue and it retires from this call",
                    entry, w->index(), w->device(), w->tiles_done(), e.what());
    } catch (...) {
    }
  } catch (...) {
  }
}

}  // namespace

host_offload_result try_host_offload(const host_gemm& g, const char* entry) noexcept {
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  host_offload_result result;
  try {
    if (!cuda_usable_in_this_process()) {  // a forked child: CUDA is not fork-safe
      log_call({entry, g.m, g.n, g.k, outcome::native, cuda_unusable_reason(), 0, 0, 0,
                seconds()});
      return result;
    }
    const config& cfg = settings();
    const bool reads_c = g.beta != 0.0;
    const prediction pred =
        predict_host(g.m, g.n, g.k, cfg.num_moduli, cfg.scaling, reads_c);
    if (cfg.mode != run_mode::native) {
      if (const char* why = gpu_unavailable()) {
        log_call({entry, g.m, g.n, g.k, outcome::native, why, 0, pred.native_ms,
                  pred.emulated_ms, seconds()});
        return result;
      }
    }
    const decision d = decide(cfg, pred, g.m, g.n, g.k);
    if (!d.emulate || g.m == 0 || g.n == 0 || g.k == 0 || g.alpha == 0.0) {
      log_call({entry, g.m, g.n, g.k, outcome::native, d.emulate ? "trivial call" : d.reason, 0,
                pred.native_ms, pred.emulated_ms, seconds()});
      return result;
    }
    worker_set& set = workers();
    std::lock_guard<std::mutex> lock(host_calls());
    const host_job job{&g,
                       engine_moduli(cfg),
                       cfg.accuracy,
                       cfg.scaling,
                       tile_columns(g.n, cfg.scaling, cfg.moduli_auto, cfg.host_tile, set.count()),
                       fail_plan{cfg.host_fail_after, cfg.host_fail_worker}};
    tile_queue q(g.n, job.width);
    const char* why = nullptr;
    const std::vector<host_worker*> crew =
        admit(set, static_cast<int>(std::min<int64_t>(set.count(), q.tiles())), job, &why);
    if (crew.empty()) {
      const outcome o =
          why == kNoWorkers || why == kNoMemoryForWorkers ? outcome::fallback : outcome::native;
      log_call({entry, g.m, g.n, g.k, o, why, 0, pred.native_ms, pred.emulated_ms, seconds()});
      return result;
    }
    // Room for the answer before anything is written: once C is partly written, reporting what
    // is left must not fail for want of memory.
    std::vector<tile_queue::tile> unfinished;
    unfinished.reserve(static_cast<size_t>(q.tiles()));
    result.left.reserve(static_cast<size_t>(q.tiles()));

    // From here on nothing throws (run_worker is noexcept, the answer's room is reserved): C
    // may be partly written, and the caller must learn exactly which columns are not.
    std::vector<std::thread> helpers;
    for (size_t i = 1; i < crew.size(); ++i) {
      try {
        helpers.emplace_back(run_worker, crew[i], std::cref(job), std::ref(q), entry);
      } catch (...) {
        break;  // no thread: fewer workers, the queue still hands out every tile
      }
    }
    run_worker(crew[0], job, q, entry);  // the caller's thread is the first worker
    for (std::thread& t : helpers) t.join();

    if (!crew[0]->declined().empty()) {  // auto found no s: C untouched, the CPU BLAS runs it
      result.left.clear();
      try {
        logger().info("{}: auto moduli (target {}): the CPU BLAS does this call: {}", entry,
                      accuracy_target_name(cfg.accuracy), crew[0]->declined());
      } catch (...) {
      }
      log_call({entry, g.m, g.n, g.k, outcome::native, kAutoModuliDeclined, 0, pred.native_ms,
                pred.emulated_ms, seconds()});
      return result;
    }
    q.unfinished_into(&unfinished);
    merge_columns_into(unfinished, &result.left);
    if (result.left.empty()) {
      result.served = true;
      log_call({entry, g.m, g.n, g.k, outcome::emulated, d.reason,
                cfg.moduli_auto ? crew[0]->ran_moduli() : cfg.num_moduli, pred.native_ms,
                pred.emulated_ms, seconds()});
      return result;
    }
    int64_t left_columns = 0;
    for (const column_range& r : result.left) left_columns += r.count;
    // Nothing written: the caller runs the call as the application made it.
    result.served = left_columns < g.n;
    if (!result.served) result.left.clear();
    try {
      logger().warn("{}: GPU path left {} of {} columns in {} range(s); the CPU BLAS does them",
                    entry, left_columns, g.n, result.served ? result.left.size() : size_t{1});
    } catch (...) {
    }
    log_call({entry, g.m, g.n, g.k, outcome::fallback, "GPU path failed", 0, 0, 0, seconds()});
    return result;
  } catch (const std::exception& e) {
    try {
      logger().warn("{}: GPU path failed ({}); the CPU BLAS does the call", entry, e.what());
    } catch (...) {
    }
  } catch (...) {
  }
  // Only reached before any worker ran: nothing written.
  result = host_offload_result{};
  log_call({entry, g.m, g.n, g.k, outcome::fallback, "GPU path failed", 0, 0, 0, seconds()});
  return result;
}

}  // namespace ozdgemm::detail
