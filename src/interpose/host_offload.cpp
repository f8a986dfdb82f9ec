// Host-memory DGEMM on the GPU: operands are packed through persistent pinned staging
// buffers into persistent device buffers, multiplied by the same engine as device calls (so
// the result is bit-identical to ozdgemm_dgemm on the same data), and C comes back the same
// way. Uploads are chunked over two staging buffers so that packing one chunk on the host
// overlaps the DMA of the previous one.
#include "interpose/host_offload.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>

#include "common/error.hpp"
#include "common/logging.hpp"
#include "interpose/call_log.hpp"
#include "interpose/config.hpp"
#include "interpose/decision.hpp"
#include "interpose/device_select.hpp"
#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::detail {
namespace {

constexpr size_t kChunkBytes = size_t{32} << 20;  // one staging buffer

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

struct device_array {
  double* ptr = nullptr;
  size_t count = 0;
  void reserve(size_t n) {
    if (n <= count) return;
    if (ptr != nullptr) OZDGEMM_CUDA_TRY(cudaFree(ptr));
    ptr = nullptr;
    count = 0;
    OZDGEMM_CUDA_TRY(cudaMalloc(&ptr, n * sizeof(double)));
    count = n;
  }
};

// One per process: host calls are serialised through it (they block the caller anyway).
// Deliberately never destroyed: CUDA must not be called from static destructors.
class host_context {
 public:
  explicit host_context(int device) : device_(device) {
    device_guard g(device_);
    OZDGEMM_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    OZDGEMM_CUBLAS_TRY(cublasCreate(&handle_));
    OZDGEMM_CUBLAS_TRY(cublasSetStream(handle_, stream_));
    for (int i = 0; i < 2; ++i) {
      OZDGEMM_CUDA_TRY(cudaMallocHost(&stage_[i], kChunkBytes));
      OZDGEMM_CUDA_TRY(cudaEventCreateWithFlags(&staged_[i], cudaEventDisableTiming));
    }
  }

  std::mutex& mutex() { return mutex_; }
  int device() const { return device_; }

  void run(const host_gemm& g) {
    const int64_t rows_a = g.opa == op_kind::n ? g.m : g.k, cols_a = g.opa == op_kind::n ? g.k : g.m;
    const int64_t rows_b = g.opb == op_kind::n ? g.k : g.n, cols_b = g.opb == op_kind::n ? g.n : g.k;
    a_.reserve(rows_a * cols_a);
    b_.reserve(rows_b * cols_b);
    c_.reserve(g.m * g.n);
    upload(g.a, g.lda, rows_a, cols_a, a_.ptr);
    upload(g.b, g.ldb, rows_b, cols_b, b_.ptr);
    if (g.beta != 0.0) upload(g.c, g.ldc, g.m, g.n, c_.ptr);
    const ozdgemm_options_t opts{settings().num_moduli, settings().scaling == scaling_mode::fast
                                                            ? OZDGEMM_SCALING_FAST
                                                            : OZDGEMM_SCALING_ACCURATE};
    const cublasOperation_t ta = g.opa == op_kind::n ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t tb = g.opb == op_kind::n ? CUBLAS_OP_N : CUBLAS_OP_T;
    const ozdgemm_status_t st = ozdgemm_dgemm(handle_, ta, tb, g.m, g.n, g.k, &g.alpha, a_.ptr,
                                              rows_a, b_.ptr, rows_b, &g.beta, c_.ptr, g.m, opts);
    if (st != OZDGEMM_STATUS_SUCCESS)
      throw std::runtime_error(std::string("emulation failed: ") + ozdgemm_status_string(st));
    download(c_.ptr, g.m, g.n, g.c, g.ldc);
  }

 private:
  // Columns [j0, j1) of a rows x cols host matrix (leading dimension ld) per chunk.
  int64_t columns_per_chunk(int64_t rows) const {
    return std::max<int64_t>(1, static_cast<int64_t>(kChunkBytes / sizeof(double)) / rows);
  }

  void upload(const double* host, int64_t ld, int64_t rows, int64_t cols, double* dev) {
    const int64_t per = columns_per_chunk(rows);
    int buf = 0;
    for (int64_t j0 = 0; j0 < cols; j0 += per, buf ^= 1) {
      const int64_t j1 = std::min(cols, j0 + per);
      const int64_t width = j1 - j0;
      if (width * rows * static_cast<int64_t>(sizeof(double)) > static_cast<int64_t>(kChunkBytes))
        throw std::runtime_error("column longer than a staging buffer");
      OZDGEMM_CUDA_TRY(cudaEventSynchronize(staged_[buf]));  // its previous DMA is done
      for (int64_t j = j0; j < j1; ++j)
        std::memcpy(stage_[buf] + (j - j0) * rows, host + j * ld, rows * sizeof(double));
      OZDGEMM_CUDA_TRY(cudaMemcpyAsync(dev + j0 * rows, stage_[buf], width * rows * sizeof(double),
                                       cudaMemcpyHostToDevice, stream_));
      OZDGEMM_CUDA_TRY(cudaEventRecord(staged_[buf], stream_));
    }
  }

  void download(const double* dev, int64_t rows, int64_t cols, double* host, int64_t ld) {
    const int64_t per = columns_per_chunk(rows);
    for (int64_t j0 = 0; j0 < cols; j0 += per) {
      const int64_t j1 = std::min(cols, j0 + per);
      OZDGEMM_CUDA_TRY(cudaMemcpyAsync(stage_[0], dev + j0 * rows, (j1 - j0) * rows * sizeof(double),
                                       cudaMemcpyDeviceToHost, stream_));
      OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream_));
      for (int64_t j = j0; j < j1; ++j)
        std::memcpy(host + j * ld, stage_[0] + (j - j0) * rows, rows * sizeof(double));
    }
  }

  std::mutex mutex_;
  int device_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  double* stage_[2] = {nullptr, nullptr};
  cudaEvent_t staged_[2] = {nullptr, nullptr};
  device_array a_, b_, c_;
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

host_context* context(int device) {
  static std::once_flag once;
  static host_context* ctx = nullptr;
  std::call_once(once, [device] {
    try {
      ctx = new host_context(device);
    } catch (const std::exception& e) {
      logger().error("host path unavailable: {}", e.what());
    }
  });
  return ctx;
}

}  // namespace

bool try_host_offload(const host_gemm& g, const char* entry) noexcept {
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  try {
    const config& cfg = settings();
    const bool reads_c = g.beta != 0.0;
    const prediction pred =
        predict_host(g.m, g.n, g.k, cfg.num_moduli, cfg.scaling, reads_c);
    if (cfg.mode != run_mode::native) {
      if (const char* why = gpu_unavailable(host_device())) {
        log_call({entry, g.m, g.n, g.k, outcome::native, why, 0, pred.native_ms,
                  pred.emulated_ms, seconds()});
        return false;
      }
    }
    const decision d = decide(cfg, pred, g.m, g.n, g.k);
    if (!d.emulate || g.m == 0 || g.n == 0 || g.k == 0 || g.alpha == 0.0) {
      log_call({entry, g.m, g.n, g.k, outcome::native, d.emulate ? "trivial call" : d.reason, 0,
                pred.native_ms, pred.emulated_ms, seconds()});
      return false;
    }
    host_context* ctx = context(host_device());
    if (ctx == nullptr) {
      log_call({entry, g.m, g.n, g.k, outcome::fallback, "host path unavailable", 0,
                pred.native_ms, pred.emulated_ms, seconds()});
      return false;
    }
    std::lock_guard<std::mutex> lock(ctx->mutex());
    device_guard guard(ctx->device());
    ctx->run(g);
    log_call({entry, g.m, g.n, g.k, outcome::emulated, d.reason, cfg.num_moduli, pred.native_ms,
              pred.emulated_ms, seconds()});
    return true;
  } catch (const std::exception& e) {
    logger().warn("{}: GPU path failed ({}); using the CPU BLAS", entry, e.what());
    log_call({entry, g.m, g.n, g.k, outcome::fallback, "GPU path failed", 0, 0, 0, seconds()});
    return false;
  } catch (...) {
    log_call({entry, g.m, g.n, g.k, outcome::fallback, "GPU path failed", 0, 0, 0, seconds()});
    return false;
  }
}

}  // namespace ozdgemm::detail
