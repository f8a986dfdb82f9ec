// Host-memory DGEMM on the GPU. Operands are packed by several threads (host_copy.hpp) into
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
// the packing overlaps the copies.
//
// If something fails part way, the columns of C already written are final; the caller
// finishes the others on the CPU BLAS (try_host_offload's return value).
#include "interpose/host_offload.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

#include "common/error.hpp"
#include "common/logging.hpp"
#include "core/checked_math.hpp"
#include "core/moduli.hpp"
#include "engine/emulate.hpp"
#include "engine/handle_context.hpp"
#include "interpose/call_log.hpp"
#include "interpose/config.hpp"
#include "interpose/decision.hpp"
#include "interpose/device_select.hpp"
#include "interpose/host_copy.hpp"
#include "interpose/process_state.hpp"

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

// Columns of C per tile. Tiles only in fast scaling (see the file comment). Wide calls get
// up to eight tiles of at least 2048 columns: narrower tiles cost more in per-tile GEMM
// efficiency and launch overhead than they gain in overlap. Measured on the H200, s = 16
// (bench/results/2026-11-29_h200_25a1312_host_tiles): n = 8192 took 42.7 / 47.7 / 60.9 ms with
// tiles of 2048 / 1024 / 512 columns, n = 16384 took 175 / 175 / 223 ms.
int64_t tile_columns(int64_t n, scaling_mode mode, long long configured) {
  if (mode != scaling_mode::fast) return n;
  if (configured > 0) return std::min<int64_t>(n, configured);
  return std::min<int64_t>(n, std::max<int64_t>(2048, round_up((n + 7) / 8, 256)));
}

// One per process: host calls are serialised through it (they block the caller anyway).
// Deliberately never destroyed: CUDA must not be called from static destructors.
class host_context {
 public:
  // Constructed with `device` current (context() sees to it).
  host_context(int device, int threads) : device_(device), engine_(device), pool_(threads) {
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

  std::mutex& mutex() { return mutex_; }
  int device() const { return device_; }
  int threads() const { return pool_.threads(); }

  // Why the call must not run here for lack of device memory, or nullptr: everything it would
  // hold (A, two B and two C tiles, the workspace) against OZDGEMM_MAX_WORKSPACE, and what it
  // would add against 90% of the free memory, the rule device calls follow
  // (engine/handle_context.hpp), so ranks sharing a GPU do not starve each other.
  const char* memory_refusal(const host_gemm& g, int num_moduli, scaling_mode mode,
                             long long tile_setting) const {
    const int64_t width = tile_columns(g.n, mode, tile_setting);
    const double doubles = static_cast<double>(g.m) * g.k +
                           2.0 * (static_cast<double>(g.k) + g.m) * static_cast<double>(width);
    const double bytes = 8.0 * doubles + static_cast<double>(emulation_workspace_bytes(
                                             g.m, width, g.k, num_moduli, mode));
    if (workspace_cap() != 0 && bytes > static_cast<double>(workspace_cap())) return "workspace cap";
    const double held = 8.0 * static_cast<double>(a_.count + b_[0].count + b_[1].count +
                                                  c_[0].count + c_[1].count);
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return "device memory unknown";
    if (bytes - held > 0.9 * static_cast<double>(free_bytes))
      return "device memory: host path over 90% of free";
    return nullptr;
  }

  // Runs the call; returns the columns of C written (all of them unless it throws, in which
  // case `*done` says how many leading columns already hold their final values).
  void run(const host_gemm& g, int num_moduli, scaling_mode mode, long long tile_setting,
           int64_t* done) {
    *done = 0;
    try {
      pipeline(g, num_moduli, mode, tile_setting, done);
    } catch (...) {
      // Nothing may still be copying into buffers the next call reuses.
      for (cudaStream_t s : {copy_in_, compute_, copy_out_}) cudaStreamSynchronize(s);
      cudaGetLastError();
      throw;
    }
  }

 private:
  struct tile {
    int64_t j0, width;
  };

  void pipeline(const host_gemm& g, int num_moduli, scaling_mode mode, long long tile_setting,
                int64_t* done) {
    const bool a_n = g.opa == op_kind::n;
    const host_block a_blk{g.a, g.lda, a_n ? g.m : g.k, a_n ? g.k : g.m};
    const int64_t width = tile_columns(g.n, mode, tile_setting);
    const int64_t tiles = (g.n + width - 1) / width;

    a_.reserve(g.m * g.k);
    for (int i = 0; i < 2 && i < tiles; ++i) {
      b_[i].reserve(g.k * width);
      c_[i].reserve(g.m * width);
    }
    // Whole columns per download chunk, so a failure never leaves a column half written.
    cols_out_ = std::max<int64_t>(1, kChunk / g.m);
    for (auto& s : stage_out_) s.reserve(cols_out_ * g.m);

    clock_ = {};
    const auto t0 = std::chrono::steady_clock::now();
    upload(a_blk, a_.ptr);
    const double a_s = elapsed(t0);
    auto tile_at = [&](int64_t t) { return tile{t * width, std::min(width, g.n - t * width)}; };
    upload_tile(g, tile_at(0), 0);
    compute_tile(g, tile_at(0), 0, num_moduli, mode, false);
    for (int64_t t = 0; t < tiles; ++t) {
      if (t + 1 < tiles) {
        const int slot = static_cast<int>((t + 1) % 2);
        // The slot's previous tile (t - 1) must be multiplied before its B is overwritten.
        if (t >= 1) OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(copy_in_, computed_[slot]));
        upload_tile(g, tile_at(t + 1), slot);
        compute_tile(g, tile_at(t + 1), slot, num_moduli, mode, true);
      }
      download_tile(g, tile_at(t), static_cast<int>(t % 2), done);
    }
    // Where the host's time went: packing and unpacking are the host-bound parts, waits are
    // time the GPU or the copies kept the host idle.
    logger().debug(
        "host path {}x{}x{}: {} tile(s) of {} columns, {} threads; A packed in {:.1f} ms; "
        "pack {:.1f} ms, unpack {:.1f} ms, waits {:.1f} ms, total {:.1f} ms",
        g.m, g.n, g.k, tiles, width, pool_.threads(), a_s * 1e3, clock_.pack_s * 1e3,
        clock_.unpack_s * 1e3, clock_.wait_s * 1e3, elapsed(t0) * 1e3);
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

  void compute_tile(const host_gemm& g, const tile& t, int slot, int num_moduli,
                    scaling_mode mode, bool reuse_a) {
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
    void* ws = engine_.workspace(emulation_workspace_bytes(g.m, t.width, g.k, num_moduli, mode));
    device_gemm call{p, scalar_arg{nullptr, g.alpha}, scalar_arg{nullptr, g.beta}, num_moduli,
                     mode, compute_, engine_.cublas(), nullptr};
    call.reuse_a = reuse_a;
    enqueue_emulation(call, ws);
    engine_.end();
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

  // Tile of C -> caller's C, whole columns per chunk through the two output staging buffers:
  // the next chunk's copy is in flight while the threads unpack this one.
  void download_tile(const host_gemm& g, const tile& t, int slot, int64_t* done) {
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
      if (c + 1 < chunks) enqueue(c + 1);
      timed(&clock_.wait_s, [&] { OZDGEMM_CUDA_TRY(cudaEventSynchronize(staged_out_[c % 2])); });
      const int64_t j = t.j0 + c * cols_out_, cols = std::min(cols_out_, t.width - c * cols_out_);
      timed(&clock_.unpack_s, [&] {
        unpack_range(pool_, stage_out_[c % 2].ptr, {g.c + j * g.ldc, g.ldc, g.m, cols}, 0,
                     cols * g.m);
      });
      *done = j + cols;
    }
  }

  std::mutex mutex_;
  int device_;
  handle_context engine_;  // private cuBLAS handle and workspace, as for device calls
  copy_pool pool_;
  cudaStream_t copy_in_ = nullptr, compute_ = nullptr, copy_out_ = nullptr;
  grow_array<true> stage_in_[2], stage_out_[2];
  cudaEvent_t staged_in_[2] = {}, staged_out_[2] = {}, tile_in_[2] = {}, computed_[2] = {};
  grow_array<false> a_, b_[2], c_[2];
  int next_in_ = 0;
  int64_t cols_out_ = 1;
  struct {
    double pack_s, unpack_s, wait_s;
  } clock_{};
};

// Why no GPU can serve host calls, or nullptr. Checked once.
const char* gpu_unavailable(int device) {
  static const char* reason = [device]() -> const char* {
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
    if (device >= count) {
      logger().warn("OZDGEMM_DEVICE={} but only {} GPU(s): host calls stay on the CPU BLAS",
                    device, count);
      return "OZDGEMM_DEVICE out of range";
    }
    return nullptr;
  }();
  return reason;
}

host_context* context(int device, int threads) {
  static std::once_flag once;
  static host_context* ctx = nullptr;
  std::call_once(once, [device, threads] {
    try {
      device_guard guard(device);
      ctx = new host_context(device, threads);
      logger().info("host path on GPU {}: {} packing threads, {} MiB pinned staging", device,
                    ctx->threads(), 4 * kChunk * sizeof(double) >> 20);
    } catch (const std::exception& e) {
      logger().error("host path unavailable: {}", e.what());
    }
  });
  return ctx;
}

}  // namespace

int64_t try_host_offload(const host_gemm& g, const char* entry) noexcept {
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  int64_t done = 0;
  try {
    if (!cuda_usable_in_this_process()) {  // a forked child: CUDA is not fork-safe
      log_call({entry, g.m, g.n, g.k, outcome::native, cuda_unusable_reason(), 0, 0, 0,
                seconds()});
      return 0;
    }
    const config& cfg = settings();
    const bool reads_c = g.beta != 0.0;
    const prediction pred =
        predict_host(g.m, g.n, g.k, cfg.num_moduli, cfg.scaling, reads_c);
    if (cfg.mode != run_mode::native) {
      if (const char* why = gpu_unavailable(host_device())) {
        log_call({entry, g.m, g.n, g.k, outcome::native, why, 0, pred.native_ms,
                  pred.emulated_ms, seconds()});
        return 0;
      }
    }
    const decision d = decide(cfg, pred, g.m, g.n, g.k);
    if (!d.emulate || g.m == 0 || g.n == 0 || g.k == 0 || g.alpha == 0.0) {
      log_call({entry, g.m, g.n, g.k, outcome::native, d.emulate ? "trivial call" : d.reason, 0,
                pred.native_ms, pred.emulated_ms, seconds()});
      return 0;
    }
    host_context* ctx = context(host_device(), host_copy_threads(cfg.host_threads));
    if (ctx == nullptr) {
      log_call({entry, g.m, g.n, g.k, outcome::fallback, "host path unavailable", 0,
                pred.native_ms, pred.emulated_ms, seconds()});
      return 0;
    }
    std::lock_guard<std::mutex> lock(ctx->mutex());
    device_guard guard(ctx->device());
    if (const char* why = ctx->memory_refusal(g, cfg.num_moduli, cfg.scaling, cfg.host_tile)) {
      log_call({entry, g.m, g.n, g.k, outcome::native, why, 0, pred.native_ms, pred.emulated_ms,
                seconds()});
      return 0;
    }
    ctx->run(g, cfg.num_moduli, cfg.scaling, cfg.host_tile, &done);
    log_call({entry, g.m, g.n, g.k, outcome::emulated, d.reason, cfg.num_moduli, pred.native_ms,
              pred.emulated_ms, seconds()});
    return g.n;
  } catch (const std::exception& e) {
    try {
      logger().warn("{}: GPU path failed after {} of {} columns ({}); the CPU BLAS does the rest",
                    entry, done, g.n, e.what());
    } catch (...) {
    }
  } catch (...) {
  }
  log_call({entry, g.m, g.n, g.k, outcome::fallback, "GPU path failed", 0, 0, 0, seconds()});
  return done;
}

}  // namespace ozdgemm::detail
