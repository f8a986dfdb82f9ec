#include "engine/int8_gemm_lt.hpp"

#include <cublasLt.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "common/cublas_api.hpp"
#include "common/lazy_library.hpp"
#include "common/logging.hpp"

namespace ozdgemm::detail {
namespace {

constexpr const char* kLtLibrary = "libcublasLt.so.13";

// Timing is for GEMMs where a few per cent are worth one host synchronisation: 2^33
// multiply-adds (2048^3) and more per call, all planes together. The probe's gains were
// measured from 2048^3 up; the tests' shapes stay far below, so they never time.
constexpr double kTimedWork = 8589934592.0;  // 2^33
constexpr int kTimedCandidates = 8;  // the probe's fastest were the heuristic's #0, #2, #3, #4
constexpr int kTimedRuns = 2;        // per candidate, after one warm-up; the minimum counts
                                     // (cublasGemmEx, timed alongside, is one more candidate)
constexpr size_t kMaxPlans = 4096;   // shapes cached per process; beyond, cublasGemmEx

// The cuBLASLt entry points, resolved on first use. Logging must not throw out of here.
struct lt_api {
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

constexpr lazy_library kLt{kLtLibrary, spdlog::level::warn,
                           "OZDGEMM_INT8_GEMM=lt falls back to cublasGemmEx"};

// Null when cuBLASLt cannot be had (logged once). Initialised once even when several threads
// arrive together (function-local static).
const lt_api* api() noexcept {
  static const lt_api* const loaded = []() -> const lt_api* {
    void* library = kLt.open();
    if (library == nullptr) return nullptr;
    static lt_api t;
    const bool ok = kLt.resolve(library, "cublasLtMatmulDescCreate", &t.desc_create) &&
                    kLt.resolve(library, "cublasLtMatmulDescDestroy", &t.desc_destroy) &&
                    kLt.resolve(library, "cublasLtMatmulDescSetAttribute", &t.desc_set) &&
                    kLt.resolve(library, "cublasLtMatrixLayoutCreate", &t.layout_create) &&
                    kLt.resolve(library, "cublasLtMatrixLayoutDestroy", &t.layout_destroy) &&
                    kLt.resolve(library, "cublasLtMatrixLayoutSetAttribute", &t.layout_set) &&
                    kLt.resolve(library, "cublasLtMatmulPreferenceCreate", &t.pref_create) &&
                    kLt.resolve(library, "cublasLtMatmulPreferenceDestroy", &t.pref_destroy) &&
                    kLt.resolve(library, "cublasLtMatmulPreferenceSetAttribute", &t.pref_set) &&
                    kLt.resolve(library, "cublasLtMatmulAlgoGetHeuristic", &t.heuristic) &&
                    kLt.resolve(library, "cublasLtMatmul", &t.matmul);
    return ok ? &t : nullptr;
  }();
  return loaded;
}

std::atomic<long long> n_matmuls{0}, n_fallbacks{0}, n_plans{0}, n_timed{0}, n_cublas_chosen{0};
std::atomic<int> failures_to_inject{0}, cublas_preferences{0};

// Takes one of the test hooks' remaining counts; false when none is left.
bool take_one(std::atomic<int>& left_count) noexcept {
  int left = left_count.load(std::memory_order_relaxed);
  while (left > 0 && !left_count.compare_exchange_weak(left, left - 1)) {
  }
  return left > 0;
}

// The largest power of two up to 256 that divides the address: what the heuristic must assume
// (its default is 256; the engine's k-blocks start 16-byte aligned).
uint32_t alignment(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a != 0) a /= 2;
  return a;
}

// Everything the choice of algorithm depends on.
struct plan_key {
  int device;
  int64_t m, n, k, lda, ldb, ldc;
  int batch;
  int64_t stride_a, stride_b, stride_c;
  uint32_t align_a, align_b, align_c;
  size_t workspace;
  auto tied() const {
    return std::tie(device, m, n, k, lda, ldb, ldc, batch, stride_a, stride_b, stride_c, align_a,
                    align_b, align_c, workspace);
  }
  bool operator<(const plan_key& o) const { return tied() < o.tied(); }
  // The same GEMM at other operand alignments (a later k-block starts k0 bytes further on).
  bool same_but_alignment(const plan_key& o) const {
    return std::tie(device, m, n, k, lda, ldb, ldc, batch, stride_a, stride_b, stride_c,
                    workspace) == std::tie(o.device, o.m, o.n, o.k, o.lda, o.ldb, o.ldc, o.batch,
                                           o.stride_a, o.stride_b, o.stride_c, o.workspace);
  }
};

// Read-only once published (warned aside), so one plan serves every thread.
struct plan {
  const lt_api* lt = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool usable = false;       // false: cuBLASLt offers nothing here; cublasGemmEx serves it
  bool provisional = false;  // the heuristic's first where timing is owed (see the header)
  // Timing found cublasGemmEx strictly faster than every cuBLASLt candidate: the caller's
  // cublasGemmEx serves the shape, as chosen (counted in cublas_chosen, not a fallback).
  bool cublas_faster = false;
  mutable std::atomic<bool> warned{false};
  // cuBLASLt does not promise that a descriptor may be read by two calls at once; launches of
  // one shape from several threads take turns (a launch is microseconds, the GEMM runs after).
  mutable std::mutex use;

  plan() = default;
  plan(const plan&) = delete;
  plan& operator=(const plan&) = delete;
  ~plan() {
    if (lt == nullptr) return;
    if (lc != nullptr) lt->layout_destroy(lc);
    if (lb != nullptr) lt->layout_destroy(lb);
    if (la != nullptr) lt->layout_destroy(la);
    if (desc != nullptr) lt->desc_destroy(desc);
  }
};

using plan_map = std::map<plan_key, std::shared_ptr<const plan>>;
std::mutex plans_mutex;

// Leaked on purpose: plans hold cuBLASLt objects, not to be destroyed after main returns.
plan_map& plans() {
  static auto* m = new plan_map();
  return *m;
}

std::shared_ptr<const plan> find_plan(const plan_key& key) {
  std::lock_guard<std::mutex> lock(plans_mutex);
  const auto it = plans().find(key);
  return it == plans().end() ? nullptr : it->second;
}

// Whether timing handed the same GEMM at other operand alignments to cublasGemmEx. A plan
// that cannot be timed now takes that choice over until it is timed itself: the accumulating
// k-blocks of a long k are never timed (their C holds the sums so far), and their operands
// start k0 bytes into the first block's, so their key differs from the timed first block's
// in alignment only. A scan of at most kMaxPlans entries, when such a plan is made.
bool timing_chose_cublas_elsewhere(const plan_key& key) {
  std::lock_guard<std::mutex> lock(plans_mutex);
  for (const auto& [k, p] : plans())
    if (p->cublas_faster && !p->provisional && k.same_but_alignment(key)) return true;
  return false;
}

// Publishes `p` unless another thread published a final plan for the key meanwhile (that one
// is returned then); null when the cache is full.
std::shared_ptr<const plan> publish(const plan_key& key, std::shared_ptr<const plan> p) {
  std::lock_guard<std::mutex> lock(plans_mutex);
  plan_map& m = plans();
  const auto it = m.find(key);
  if (it != m.end()) {
    if (!it->second->provisional) return it->second;
    it->second = std::move(p);
    return it->second;
  }
  if (m.size() >= kMaxPlans) return nullptr;
  return m.emplace(key, std::move(p)).first->second;
}

// The matmul description and the three layouts; false if cuBLASLt refuses any of them.
bool describe(const lt_api& lt, const lt_gemm_shape& s, plan* p) {
  const cublasOperation_t op_t = CUBLAS_OP_T;
  if (lt.desc_create(&p->desc, CUBLAS_COMPUTE_32I, CUDA_R_32I) != CUBLAS_STATUS_SUCCESS ||
      lt.desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t) !=
          CUBLAS_STATUS_SUCCESS ||
      lt.layout_create(&p->la, CUDA_R_8I, s.k, s.m, s.lda) != CUBLAS_STATUS_SUCCESS ||
      lt.layout_create(&p->lb, CUDA_R_8I, s.k, s.n, s.ldb) != CUBLAS_STATUS_SUCCESS ||
      lt.layout_create(&p->lc, CUDA_R_32I, s.m, s.n, s.ldc) != CUBLAS_STATUS_SUCCESS)
    return false;
  if (s.batch == 1) return true;
  const int32_t count = s.batch;
  const std::pair<cublasLtMatrixLayout_t, int64_t> strided[] = {
      {p->la, s.stride_a}, {p->lb, s.stride_b}, {p->lc, s.stride_c}};
  for (const auto& [layout, stride] : strided)
    if (lt.layout_set(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count) !=
            CUBLAS_STATUS_SUCCESS ||
        lt.layout_set(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                      sizeof stride) != CUBLAS_STATUS_SUCCESS)
      return false;
  return true;
}

// The heuristic's results for the reserved workspace and the operands' alignment, best first;
// only those it marks usable. Returns how many.
int heuristic(const lt_api& lt, cublasLtHandle_t handle, const plan& p, const plan_key& key,
              cublasLtMatmulHeuristicResult_t* out, int max) {
  cublasLtMatmulPreference_t pref = nullptr;
  if (lt.pref_create(&pref) != CUBLAS_STATUS_SUCCESS) return 0;
  const uint64_t ws = key.workspace;
  int found = 0;
  const bool ok =
      lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws) ==
          CUBLAS_STATUS_SUCCESS &&
      lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &key.align_a,
                  sizeof key.align_a) == CUBLAS_STATUS_SUCCESS &&
      lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &key.align_b,
                  sizeof key.align_b) == CUBLAS_STATUS_SUCCESS &&
      lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &key.align_c,
                  sizeof key.align_c) == CUBLAS_STATUS_SUCCESS &&
      lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &key.align_c,
                  sizeof key.align_c) == CUBLAS_STATUS_SUCCESS &&
      lt.heuristic(handle, p.desc, p.la, p.lb, p.lc, p.lc, pref, max, out, &found) ==
          CUBLAS_STATUS_SUCCESS;
  lt.pref_destroy(pref);
  if (!ok) return 0;
  int usable = 0;
  for (int i = 0; i < found; ++i)
    if (out[i].state == CUBLAS_STATUS_SUCCESS && out[i].workspaceSize <= key.workspace)
      out[usable++] = out[i];
  return usable;
}

// Events destroyed however the timing ends.
struct event_pair {
  cudaEvent_t start = nullptr, stop = nullptr;
  bool ok() const { return start != nullptr && stop != nullptr; }
  event_pair() {
    if (cudaEventCreate(&start) != cudaSuccess) start = nullptr;
    if (cudaEventCreate(&stop) != cudaSuccess) stop = nullptr;
  }
  ~event_pair() {
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
  }
};

// Times `run` (which enqueues one GEMM writing C = A^T B on `stream`): one warm-up, then
// kTimedRuns runs between the two events, each followed by one host synchronisation; the
// minimum in *ms. False when any step fails: the candidate is dropped, and the error state is
// cleared (a failed candidate is not this call's error).
template <class Run>
bool time_one(const event_pair& ev, cudaStream_t stream, Run run, float* ms) {
  bool ok = run();  // warm-up; an algorithm that refuses is skipped
  for (int r = 0; r < kTimedRuns && ok; ++r) {
    float t = 0;
    ok = cudaEventRecord(ev.start, stream) == cudaSuccess && run() &&
         cudaEventRecord(ev.stop, stream) == cudaSuccess &&
         cudaEventSynchronize(ev.stop) == cudaSuccess &&
         cudaEventElapsedTime(&t, ev.start, ev.stop) == cudaSuccess;
    *ms = r == 0 ? t : (t < *ms ? t : *ms);
  }
  if (!ok) (void)cudaGetLastError();
  return ok;
}

// Times the cuBLASLt candidates, each writing C = A^T B (beta = 0), and returns the index of
// the fastest (its time in *best_ms), or -1 when none could be timed.
int fastest(const lt_api& lt, cublasLtHandle_t handle, const plan& p,
            const cublasLtMatmulHeuristicResult_t* cand, int count, const int8_t* a,
            const int8_t* b, int32_t* c, void* ws, size_t ws_bytes, cudaStream_t stream,
            const event_pair& ev, float* best_ms) {
  const int32_t one = 1, zero = 0;
  int chosen = -1;
  for (int i = 0; i < count; ++i) {
    auto run = [&] {
      return lt.matmul(handle, p.desc, &one, a, p.la, b, p.lb, &zero, c, p.lc, c, p.lc,
                       &cand[i].algo, ws, ws_bytes, stream) == CUBLAS_STATUS_SUCCESS;
    };
    float ms = 0;
    if (time_one(ev, stream, run, &ms) && (chosen < 0 || ms < *best_ms)) {
      chosen = i;
      *best_ms = ms;
    }
  }
  return chosen;
}

// Times the call int8_gemm() (engine/int8_gemm.cpp) makes when the lt backend hands a GEMM
// back: cublasGemmStridedBatchedEx, INT8 in, INT32 out, CUBLAS_GEMM_DEFAULT, beta = 0, on
// `handle` (the engine's private handle, bound to `stream`). False when it failed.
bool time_cublas(cublasHandle_t handle, const lt_gemm_shape& s, const int8_t* a, const int8_t* b,
                 int32_t* c, cudaStream_t stream, const event_pair& ev, float* ms) {
  const int32_t one = 1, zero = 0;
  auto run = [&] {
    return cublas_gemm_strided_batched_ex(
               handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.m), static_cast<int>(s.n),
               static_cast<int>(s.k), &one, a, CUDA_R_8I, static_cast<int>(s.lda), s.stride_a, b,
               CUDA_R_8I, static_cast<int>(s.ldb), s.stride_b, &zero, c, CUDA_R_32I,
               static_cast<int>(s.ldc), s.stride_c, s.batch, CUBLAS_COMPUTE_32I,
               CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
  };
  return time_one(ev, stream, run, ms);
}

// Makes the plan for `key`: descriptors, the heuristic's candidates, and with `timed` the
// fastest of them and cublasGemmEx (else the heuristic's first). An unusable plan (usable ==
// false) is cached as well, so that a shape cuBLASLt cannot serve is asked about once.
std::shared_ptr<const plan> make_plan(const lt_api& lt, cublasHandle_t blas, const plan_key& key,
                                      const lt_gemm_shape& s, bool large, bool timed,
                                      const int8_t* a, const int8_t* b, int32_t* c, void* ws,
                                      size_t ws_bytes, cudaStream_t stream) {
  const auto handle = reinterpret_cast<cublasLtHandle_t>(blas);  // as in lt_int8_gemm
  auto p = std::make_shared<plan>();
  p->lt = &lt;
  n_plans.fetch_add(1, std::memory_order_relaxed);
  cublasLtMatmulHeuristicResult_t cand[kTimedCandidates];
  const int count = describe(lt, s, p.get()) ? heuristic(lt, handle, *p, key, cand,
                                                         kTimedCandidates)
                                             : 0;
  if (count == 0) {
    log_nothrow(spdlog::level::warn,
                "cuBLASLt has no algorithm for the INT8 GEMM {}x{}x{} (batch {}, alignment "
                "{}/{}/{} bytes, workspace {} MiB) on device {}: cublasGemmEx serves it",
                s.m, s.n, s.k, s.batch, key.align_a, key.align_b, key.align_c, ws_bytes >> 20,
                key.device);
    p->warned.store(true);
    return p;
  }
  int chosen = 0;
  float best_ms = 0, cublas_ms = 0;
  bool lt_timed = false, cublas_timed = false, forced = false;
  if (timed) {
    const event_pair ev;
    if (ev.ok()) {
      const int i =
          fastest(lt, handle, *p, cand, count, a, b, c, ws, ws_bytes, stream, ev, &best_ms);
      lt_timed = i >= 0;
      if (lt_timed) {
        chosen = i;
        n_timed.fetch_add(1, std::memory_order_relaxed);
        cublas_timed = time_cublas(blas, s, a, b, c, stream, ev, &cublas_ms);
        forced = take_one(cublas_preferences);  // test-only
      }
    }
  }
  p->algo = cand[chosen].algo;
  p->usable = true;
  p->provisional = large && !timed;
  // Strictly faster only: on a tie cuBLASLt keeps the shape. When none of cuBLASLt's candidates
  // ran, nothing was compared: the heuristic's first stays, and a failing call falls back
  // (with a warning) as before.
  p->cublas_faster = lt_timed && cublas_timed && (forced || cublas_ms < best_ms);
  if (p->provisional && timing_chose_cublas_elsewhere(key)) {
    p->cublas_faster = true;
    log_nothrow(spdlog::level::debug,
                "INT8 GEMM {}x{}x{} (batch {}) on device {}: untimed for now (capture or "
                "accumulation); cublasGemmEx serves it, as timing chose for it at other operand "
                "alignments",
                s.m, s.n, s.k, s.batch, key.device);
    return p;
  }
  if (p->cublas_faster) {
    log_nothrow(spdlog::level::debug,
                "INT8 GEMM {}x{}x{} (batch {}) on device {}: cublasGemmEx {:.3f} ms beats "
                "cuBLASLt's best {:.3f} ms{}; cublasGemmEx serves this shape",
                s.m, s.n, s.k, s.batch, key.device, cublas_ms, best_ms,
                forced ? " (or a test forced it)" : "");
    return p;
  }
  std::string how = "small GEMM, not timed";
  if (p->provisional) how = "untimed for now: capture or accumulation";
  if (timed)
    how = !lt_timed ? std::string("timing failed")
                    : fmt::format("timed, {:.3f} ms; cublasGemmEx {}", best_ms,
                                  cublas_timed ? fmt::format("{:.3f} ms", cublas_ms)
                                               : std::string("failed"));
  log_nothrow(spdlog::level::debug,
              "INT8 GEMM {}x{}x{} (batch {}) on device {} via cuBLASLt: heuristic's #{} of {} ({})",
              s.m, s.n, s.k, s.batch, key.device, chosen, count, how);
  return p;
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;  // unknown: do nothing that could break a capture
  }
  return status != cudaStreamCaptureStatusNone;
}

bool fall_back(const plan* p, const lt_gemm_shape& s, const char* why) noexcept {
  n_fallbacks.fetch_add(1, std::memory_order_relaxed);
  const bool first = p == nullptr || !p->warned.exchange(true);
  if (first)
    log_nothrow(spdlog::level::warn,
                "INT8 GEMM {}x{}x{} (batch {}): {}; cublasGemmEx runs it (same result)", s.m, s.n,
                s.k, s.batch, why);
  else
    log_nothrow(spdlog::level::debug, "INT8 GEMM {}x{}x{} (batch {}): {}; cublasGemmEx runs it",
                s.m, s.n, s.k, s.batch, why);
  return false;
}

}  // namespace

bool lt_int8_gemm(cublasHandle_t handle, cudaStream_t stream, const lt_gemm_shape& s,
                  const int8_t* a, const int8_t* b, int32_t* c, bool accumulate, void* workspace,
                  size_t workspace_bytes, lt_use use) noexcept {
  try {
    const lt_api* lt = api();
    if (lt == nullptr) {
      n_fallbacks.fetch_add(1, std::memory_order_relaxed);
      return false;  // said once, by api()
    }
    // Documented by cuBLAS: a cublasHandle_t may stand for a cublasLtHandle_t.
    const auto lt_handle = reinterpret_cast<cublasLtHandle_t>(handle);
    plan_key key{0, s.m, s.n, s.k, s.lda, s.ldb, s.ldc, s.batch, s.stride_a, s.stride_b,
                 s.stride_c, alignment(a), alignment(b), alignment(c), workspace_bytes};
    if (cudaGetDevice(&key.device) != cudaSuccess) {
      (void)cudaGetLastError();
      return fall_back(nullptr, s, "no current device");
    }
    std::shared_ptr<const plan> p = find_plan(key);
    if (p == nullptr || (p->provisional && !accumulate)) {
      const bool large = static_cast<double>(s.m) * s.n * s.k * s.batch >= kTimedWork;
      const bool captured = capturing(stream);
      if (p == nullptr || !captured) {
        const bool timed = large && !accumulate && !captured;
        p = publish(key, make_plan(*lt, handle, key, s, large, timed, a, b, c, workspace,
                                   workspace_bytes, stream));
        if (p == nullptr) {  // said once per process
          static std::atomic<bool> said{false};
          if (said.exchange(true)) {
            n_fallbacks.fetch_add(1, std::memory_order_relaxed);
            return false;
          }
          return fall_back(nullptr, s, "cuBLASLt plan cache full (4096 GEMM shapes)");
        }
      }
    }
    if (use == lt_use::plan_only) return p->usable;
    if (p->cublas_faster && use != lt_use::in_graph_body) {
      n_cublas_chosen.fetch_add(1, std::memory_order_relaxed);
      return false;  // as timing chose (said at debug level when the plan was made)
    }
    if (!p->usable) {
      n_fallbacks.fetch_add(1, std::memory_order_relaxed);
      return false;  // said when the plan was made
    }
    const int32_t one = 1, zero = 0;
    cublasStatus_t st = CUBLAS_STATUS_EXECUTION_FAILED;
    if (!take_one(failures_to_inject)) {
      std::lock_guard<std::mutex> lock(p->use);
      st = lt->matmul(lt_handle, p->desc, &one, a, p->la, b, p->lb, accumulate ? &one : &zero, c,
                      p->lc, c, p->lc, &p->algo, workspace, workspace_bytes, stream);
    }
    if (st != CUBLAS_STATUS_SUCCESS)
      return fall_back(p.get(), s,
                       (std::string("cublasLtMatmul failed: ") + cublas_status_string(st)).c_str());
    n_matmuls.fetch_add(1, std::memory_order_relaxed);
    return true;
  } catch (...) {
    return fall_back(nullptr, s, "cuBLASLt path failed (exception)");
  }
}

lt_counts lt_counts_now() noexcept {
  return lt_counts{n_matmuls.load(), n_fallbacks.load(), n_plans.load(), n_timed.load(),
                   n_cublas_chosen.load()};
}

void lt_fail_next_for_testing(int count) noexcept { failures_to_inject.store(count); }

void lt_prefer_cublas_next_for_testing(int count) noexcept { cublas_preferences.store(count); }

}  // namespace ozdgemm::detail
