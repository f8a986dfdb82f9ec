#include "engine/int8_gemm.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "common/cublas_api.hpp"
#include "common/env.hpp"
#include "common/error.hpp"
#include "common/fault_injection.hpp"
#include "common/logging.hpp"

namespace ozdgemm::detail {
namespace {

constexpr int kCandidates = 8;     // algorithms timed per shape (the heuristic's first ones)
constexpr int kTimedRuns = 2;      // per candidate, after one warm-up; the minimum counts
constexpr size_t kMaxPlans = 4096;  // shapes cached per process; beyond, cuBLAS's own choice
constexpr int kMaxDevices = 64;

bool tuning_enabled() {
  static const bool on = [] {
    const char* v = setting_env("OZDGEMM_GEMM_TUNING");
    if (v == nullptr || std::strcmp(v, "on") == 0) return true;
    if (std::strcmp(v, "off") == 0) return false;
    logger().warn("OZDGEMM_GEMM_TUNING=\"{}\" is not on or off; using on", v);
    return true;
  }();
  return on;
}

// One single-GEMM shape on one device: m x n x k with lda = ldb = ld_ab, ldc = m.
struct shape_key {
  int device;
  int64_t m, n, k, ld_ab;
  bool operator<(const shape_key& o) const {
    return std::tie(device, m, n, k, ld_ab) < std::tie(o.device, o.m, o.n, o.k, o.ld_ab);
  }
};

// The cuBLASLt description of a shape and the algorithm chosen for it. Descriptors are only
// read after tuning, so one plan serves every thread. Never destroyed: plans live as long as
// the process (kMaxPlans bounds them).
struct plan {
  bool use_lt = false;  // false: no cuBLASLt algorithm was usable; cublasGemmEx serves it
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo{};
};

std::mutex plans_mutex;
std::map<shape_key, std::shared_ptr<const plan>> plans;

std::shared_ptr<const plan> find_plan(const shape_key& key) {
  std::lock_guard<std::mutex> lock(plans_mutex);
  const auto it = plans.find(key);
  return it == plans.end() ? nullptr : it->second;
}

void store_plan(const shape_key& key, std::shared_ptr<const plan> p) {
  std::lock_guard<std::mutex> lock(plans_mutex);
  if (plans.size() < kMaxPlans) plans.emplace(key, std::move(p));
}

// One cuBLASLt handle per device, created on first use with that device current. A cuBLASLt
// handle holds no stream or workspace, and cuBLAS's functions are thread safe on a shared
// handle.
cublasLtHandle_t lt_handle(const cublaslt_entry_points& lt, int device) {
  static std::mutex mutex;
  static cublasLtHandle_t handles[kMaxDevices] = {};
  if (device < 0 || device >= kMaxDevices) return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (handles[device] == nullptr && lt.create(&handles[device]) != CUBLAS_STATUS_SUCCESS)
    handles[device] = nullptr;
  return handles[device];
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  OZDGEMM_CUDA_TRY(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

// Events that are destroyed however the tuning ends.
struct event_pair {
  cudaEvent_t start = nullptr, stop = nullptr;
  event_pair() {
    OZDGEMM_CUDA_TRY(cudaEventCreate(&start));
    OZDGEMM_CUDA_TRY(cudaEventCreate(&stop));
  }
  ~event_pair() {
    if (start != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaEventDestroy(start));
    if (stop != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaEventDestroy(stop));
  }
};

// Describes the shape to cuBLASLt and times the heuristic's first kCandidates algorithms
// (those that need no workspace) on `stream`, each writing C = A^T B: C holds that product
// afterwards, whichever ran last. One host synchronisation per candidate.
std::shared_ptr<const plan> tune(const cublaslt_entry_points& lt, cublasLtHandle_t handle,
                                 const shape_key& key, const int8_t* a, const int8_t* b,
                                 int32_t* c, cudaStream_t stream) {
  auto p = std::make_shared<plan>();
  const cublasOperation_t op_t = CUBLAS_OP_T;
  if (lt.desc_create(&p->desc, CUBLAS_COMPUTE_32I, CUDA_R_32I) != CUBLAS_STATUS_SUCCESS ||
      lt.desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t) !=
          CUBLAS_STATUS_SUCCESS ||
      lt.layout_create(&p->la, CUDA_R_8I, key.k, key.m, key.ld_ab) != CUBLAS_STATUS_SUCCESS ||
      lt.layout_create(&p->lb, CUDA_R_8I, key.k, key.n, key.ld_ab) != CUBLAS_STATUS_SUCCESS ||
      lt.layout_create(&p->lc, CUDA_R_32I, key.m, key.n, key.m) != CUBLAS_STATUS_SUCCESS)
    return p;  // use_lt stays false (the descriptors made so far are kept with the plan)

  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulHeuristicResult_t found[kCandidates];
  int count = 0;
  const size_t no_workspace = 0;
  if (lt.pref_create(&pref) == CUBLAS_STATUS_SUCCESS) {
    if (lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &no_workspace,
                    sizeof no_workspace) != CUBLAS_STATUS_SUCCESS ||
        lt.heuristic(handle, p->desc, p->la, p->lb, p->lc, p->lc, pref, kCandidates, found,
                     &count) != CUBLAS_STATUS_SUCCESS)
      count = 0;
    lt.pref_destroy(pref);
  }

  const int32_t one = 1, zero = 0;
  event_pair ev;
  float best = 0;
  int chosen = -1;
  for (int i = 0; i < count; ++i) {
    auto run = [&] {
      return lt.matmul(handle, p->desc, &one, a, p->la, b, p->lb, &zero, c, p->lc, c, p->lc,
                       &found[i].algo, nullptr, 0, stream);
    };
    if (run() != CUBLAS_STATUS_SUCCESS) continue;  // warm-up; an algorithm that refuses is skipped
    float fastest = 0;
    bool ok = true;
    for (int r = 0; r < kTimedRuns && ok; ++r) {
      OZDGEMM_CUDA_TRY(cudaEventRecord(ev.start, stream));
      ok = run() == CUBLAS_STATUS_SUCCESS;
      OZDGEMM_CUDA_TRY(cudaEventRecord(ev.stop, stream));
      OZDGEMM_CUDA_TRY(cudaEventSynchronize(ev.stop));
      float ms = 0;
      OZDGEMM_CUDA_TRY(cudaEventElapsedTime(&ms, ev.start, ev.stop));
      fastest = r == 0 ? ms : std::min(fastest, ms);
    }
    if (ok && (chosen < 0 || fastest < best)) best = fastest, chosen = i;
  }
  if (chosen >= 0) {
    p->use_lt = true;
    p->algo = found[chosen].algo;
  }
  logger().debug("INT8 GEMM {}x{}x{} on device {}: {} of {} cuBLASLt algorithms timed, #{} chosen "
                 "({:.3f} ms)",
                 key.m, key.n, key.k, key.device, count, kCandidates, chosen, best);
  return p;
}

// The cached or newly tuned plan for a single GEMM; null when cublasGemmEx should serve it.
std::shared_ptr<const plan> plan_for(cublasHandle_t h, int64_t m, int64_t n, int64_t k,
                                     int64_t ld_ab, const int8_t* a, const int8_t* b, int32_t* c,
                                     bool accumulate, cudaStream_t stream,
                                     cublasLtHandle_t* handle) {
  if (!tuning_enabled()) return nullptr;
  const cublaslt_entry_points* lt = cublaslt();
  if (lt == nullptr) return nullptr;
  int device = 0;
  OZDGEMM_CUDA_TRY(cudaGetDevice(&device));
  *handle = lt_handle(*lt, device);
  if (*handle == nullptr) return nullptr;
  const shape_key key{device, m, n, k, ld_ab};
  std::shared_ptr<const plan> p = find_plan(key);
  // Tuning writes C several times and synchronises: only where C is to be overwritten anyway,
  // and never into a graph being captured.
  if (p == nullptr && !accumulate && !capturing(stream)) {
    p = tune(*lt, *handle, key, a, b, c, stream);
    store_plan(key, p);
  }
  (void)h;
  return p != nullptr && p->use_lt ? p : nullptr;
}

}  // namespace

void int8_gemm(cublasHandle_t h, int64_t m_pad, int64_t n_pad, int64_t k0, int64_t klen,
               int64_t k_pad, const int8_t* a, const int8_t* b, int32_t* c, int batch,
               bool accumulate) {
  static const int32_t one = 1, zero = 0;
  if (inject_fault(fault::cublas))  // test-only (common/fault_injection.hpp)
    throw cublas_error(CUBLAS_STATUS_EXECUTION_FAILED, "injected fault: INT8 GEMM failed");
  if (batch == 1) {
    cudaStream_t stream = nullptr;
    OZDGEMM_CUBLAS_TRY(cublas_get_stream(h, &stream));
    cublasLtHandle_t handle = nullptr;
    const std::shared_ptr<const plan> p =
        plan_for(h, m_pad, n_pad, klen, k_pad, a + k0, b + k0, c, accumulate, stream, &handle);
    if (p != nullptr) {
      OZDGEMM_CUBLAS_TRY(cublaslt()->matmul(handle, p->desc, &one, a + k0, p->la, b + k0, p->lb,
                                            accumulate ? &one : &zero, c, p->lc, c, p->lc,
                                            &p->algo, nullptr, 0, stream));
      return;
    }
  }
  OZDGEMM_CUBLAS_TRY(cublas_gemm_strided_batched_ex(
      h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(m_pad), static_cast<int>(n_pad),
      static_cast<int>(klen), &one, a + k0, CUDA_R_8I, static_cast<int>(k_pad), m_pad * k_pad,
      b + k0, CUDA_R_8I, static_cast<int>(k_pad), n_pad * k_pad, accumulate ? &one : &zero, c,
      CUDA_R_32I, static_cast<int>(m_pad), m_pad * n_pad, batch, CUBLAS_COMPUTE_32I,
      CUBLAS_GEMM_DEFAULT));
}

}  // namespace ozdgemm::detail
