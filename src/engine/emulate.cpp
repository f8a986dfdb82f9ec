#include "engine/emulate.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/error.hpp"
#include "common/fault_injection.hpp"
#include "core/moduli.hpp"
#include "crt.cuh"
#include "residues.cuh"
#include "scaling.cuh"

namespace ozdgemm::detail {
namespace {

// Carves typed, 256-byte aligned arrays out of one buffer; with a null base it only sizes.
class carver {
 public:
  explicit carver(void* base) : base_(static_cast<char*>(base)) {}
  template <class T>
  T* take(int64_t count) {
    offset_ = (offset_ + 255) / 256 * 256;
    T* p = base_ == nullptr ? nullptr : reinterpret_cast<T*>(base_ + offset_);
    offset_ += static_cast<size_t>(count) * sizeof(T);
    return p;
  }
  size_t used() const { return offset_; }
  // The offset the next take() will get.
  size_t align() {
    offset_ = (offset_ + 255) / 256 * 256;
    return offset_;
  }

 private:
  char* base_;
  size_t offset_ = 0;
};

struct layout {
  int64_t m_pad, n_pad, k_pad, nblk;
  // A's arrays come first and their offsets depend on m, k, s and the mode only, so a call
  // with the same A and another n finds A's scaling and residues where it left them
  // (device_gemm::reuse_a). Each side's scan outputs are zeroed by one memset per call.
  int* emax_a;
  uint32_t* flags_a;
  unsigned long long* sum_q2_a;  // fast
  size_t a_zeroed_end;
  int* exp_a;
  int8_t* res_a;  // [s][m_pad][k_pad]
  size_t b_zeroed_begin;
  int* emax_b;
  uint32_t* flags_b;
  unsigned long long* sum_q2_b;  // fast
  unsigned long long* row_max;   // accurate
  size_t b_zeroed_end;
  // Written before they are read.
  int* exp_b;
  int* head_b;
  int8_t* bound_a;  // accurate: u planes and U blocks
  int8_t* bound_b;
  int32_t* bound_u;
  int8_t* res_b;  // [s][n_pad][k_pad]
  int32_t* prod;  // [s][n_pad][m_pad]
  size_t total_bytes;
};

layout make_layout(void* base, int64_t m, int64_t n, int64_t k, int s, scaling_mode mode) {
  layout L{};
  L.m_pad = round_up(m, kPad);
  L.n_pad = round_up(n, kPad);
  L.k_pad = round_up(k, kPad);
  L.nblk = (L.k_pad + kKBlock - 1) / kKBlock;
  const bool accurate = mode == scaling_mode::accurate;
  carver c(base);
  L.emax_a = c.take<int>(m);
  L.flags_a = c.take<uint32_t>(m);
  L.sum_q2_a = c.take<unsigned long long>(accurate ? 0 : m);
  L.a_zeroed_end = c.used();
  L.exp_a = c.take<int>(m);
  L.res_a = c.take<int8_t>(s * L.m_pad * L.k_pad);
  L.b_zeroed_begin = c.align();
  L.emax_b = c.take<int>(n);
  L.flags_b = c.take<uint32_t>(n);
  L.sum_q2_b = c.take<unsigned long long>(accurate ? 0 : n);
  L.row_max = c.take<unsigned long long>(accurate ? m : 0);
  L.b_zeroed_end = c.used();
  L.exp_b = c.take<int>(n);
  L.head_b = c.take<int>(accurate ? n : 0);
  L.bound_a = c.take<int8_t>(accurate ? L.m_pad * L.k_pad : 0);
  L.bound_b = c.take<int8_t>(accurate ? L.n_pad * L.k_pad : 0);
  L.bound_u = c.take<int32_t>(accurate ? L.nblk * L.m_pad * L.n_pad : 0);
  L.res_b = c.take<int8_t>(s * L.n_pad * L.k_pad);
  L.prod = c.take<int32_t>(s * L.m_pad * L.n_pad);
  L.total_bytes = c.used();
  return L;
}

// INT8 x INT8 -> INT32, C = A^T B (+ C when accumulate), over `batch` planes, for one k-block.
// All leading dimensions and offsets are multiples of 16 (tensor-core alignment).
void int8_gemm(cublasHandle_t h, int64_t m_pad, int64_t n_pad, int64_t k0, int64_t klen,
               int64_t k_pad, const int8_t* a, const int8_t* b, int32_t* c, int batch,
               bool accumulate) {
  static const int32_t one = 1, zero = 0;
  if (inject_fault(fault::cublas))  // test-only (common/fault_injection.hpp)
    throw cublas_error(CUBLAS_STATUS_EXECUTION_FAILED, "injected fault: INT8 GEMM failed");
  OZDGEMM_CUBLAS_TRY(cublas_gemm_strided_batched_ex(
      h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(m_pad), static_cast<int>(n_pad),
      static_cast<int>(klen), &one, a + k0, CUDA_R_8I, static_cast<int>(k_pad), m_pad * k_pad,
      b + k0, CUDA_R_8I, static_cast<int>(k_pad), n_pad * k_pad, accumulate ? &one : &zero, c,
      CUDA_R_32I, static_cast<int>(m_pad), m_pad * n_pad, batch, CUBLAS_COMPUTE_32I,
      CUBLAS_GEMM_DEFAULT));
}

// How the s modulus GEMMs are issued. Measured on the H200 (bench/results/
// 2026-11-29_h200_b9e3bbd): one strided-batched call is faster while one product is too small
// to fill the GPU (n = 2048: 0.86 vs 1.00 ms at s = 14), one call per modulus is faster from
// n = 4096 up (3.05 vs 3.43 ms; 131 vs 134 ms at n = 16384). The switch sits at 2^35 = 3.2e10
// multiply-adds per modulus, between the measured sizes. OZDGEMM_GEMM_BATCHING=batched|looped
// overrides the rule (read once), for measurements.
bool batched_gemms(gemm_batching choice, int64_t m_pad, int64_t n_pad, int64_t k_pad) {
  static const gemm_batching forced = [] {
    const char* v = std::getenv("OZDGEMM_GEMM_BATCHING");
    if (v != nullptr && std::strcmp(v, "batched") == 0) return gemm_batching::batched;
    if (v != nullptr && std::strcmp(v, "looped") == 0) return gemm_batching::looped;
    return gemm_batching::automatic;
  }();
  if (choice == gemm_batching::automatic) choice = forced;
  if (choice != gemm_batching::automatic) return choice == gemm_batching::batched;
  return static_cast<double>(m_pad) * n_pad * k_pad < 34359738368.0;  // 2^35
}

void record(cudaEvent_t e, cudaStream_t s) {
  if (e != nullptr) OZDGEMM_CUDA_TRY(cudaEventRecord(e, s));
}

}  // namespace

size_t emulation_workspace_bytes(int64_t m, int64_t n, int64_t k, int num_moduli,
                                 scaling_mode mode) {
  return make_layout(nullptr, m, n, k, num_moduli, mode).total_bytes;
}

void enqueue_emulation(const device_gemm& call, void* workspace) {
  const gemm_problem& p = call.p;
  const modulus_table& tb = moduli_for(call.num_moduli);
  const int s = tb.s;
  const layout L = make_layout(workspace, p.m, p.n, p.k, s, call.mode);
  const cudaStream_t st = call.stream;
  const double* alpha_dev = call.alpha.dev;
  stage_events* ev = call.events;

  const bool fast = call.mode == scaling_mode::fast;
  if (call.reuse_a && !fast)
    throw std::invalid_argument("reuse_a needs fast scaling: accurate exponents of A depend on B");
  const bool prepare_a = !call.reuse_a;
  char* ws = static_cast<char*>(workspace);

  if (ev != nullptr) record(ev->start, st);
  if (prepare_a) OZDGEMM_CUDA_TRY(cudaMemsetAsync(ws, 0, L.a_zeroed_end, st));
  OZDGEMM_CUDA_TRY(
      cudaMemsetAsync(ws + L.b_zeroed_begin, 0, L.b_zeroed_end - L.b_zeroed_begin, st));

  // 1. Scaling.
  if (prepare_a) launch_vector_scan(p.a, p.m, p.k, alpha_dev, L.emax_a, L.flags_a, st);
  OZDGEMM_CHECK_LAUNCH();
  launch_vector_scan(p.b, p.n, p.k, alpha_dev, L.emax_b, L.flags_b, st);
  OZDGEMM_CHECK_LAUNCH();
  if (inject_fault(fault::kernel))  // test-only: as if this launch had been rejected
    throw cuda_error(cudaErrorLaunchOutOfResources, "injected fault: kernel launch failed");
  if (fast) {
    if (prepare_a) {
      launch_norm_scan(p.a, p.m, p.k, alpha_dev, L.emax_a, L.sum_q2_a, st);
      launch_fast_exponents(p.m, L.emax_a, L.sum_q2_a, tb, L.exp_a, st);
    }
    launch_norm_scan(p.b, p.n, p.k, alpha_dev, L.emax_b, L.sum_q2_b, st);
    launch_fast_exponents(p.n, L.emax_b, L.sum_q2_b, tb, L.exp_b, st);
    OZDGEMM_CHECK_LAUNCH();
  } else {
    launch_bound_quantize(p.a, p.m, L.m_pad, p.k, L.k_pad, alpha_dev, L.emax_a, L.bound_a, st);
    launch_bound_quantize(p.b, p.n, L.n_pad, p.k, L.k_pad, alpha_dev, L.emax_b, L.bound_b, st);
    OZDGEMM_CHECK_LAUNCH();
    for (int64_t blk = 0; blk < L.nblk; ++blk) {
      const int64_t k0 = blk * kKBlock;
      const int64_t klen = L.k_pad - k0 < kKBlock ? L.k_pad - k0 : kKBlock;
      int8_gemm(call.int8_handle, L.m_pad, L.n_pad, k0, klen, L.k_pad, L.bound_a, L.bound_b,
                L.bound_u + blk * L.m_pad * L.n_pad, 1, false);
    }
    launch_accurate_exponents(L.bound_u, L.nblk, p.m, p.n, L.m_pad, L.n_pad, L.emax_a, L.emax_b,
                              tb, L.head_b, L.row_max, L.exp_a, L.exp_b, st);
    OZDGEMM_CHECK_LAUNCH();
  }

  // 2. Residues.
  if (prepare_a)
    launch_residues(p.a, p.m, L.m_pad, p.k, L.k_pad, alpha_dev, L.exp_a, tb, L.res_a, st);
  launch_residues(p.b, p.n, L.n_pad, p.k, L.k_pad, alpha_dev, L.exp_b, tb, L.res_b, st);
  OZDGEMM_CHECK_LAUNCH();
  if (ev != nullptr) record(ev->prepared, st);

  // 3. INT8 GEMMs per k-block, batched over the moduli or one call each (batched_gemms);
  // between blocks the INT32 sums are reduced mod m_t so the next block cannot overflow.
  for (int64_t blk = 0; blk < L.nblk; ++blk) {
    const int64_t k0 = blk * kKBlock;
    const int64_t klen = L.k_pad - k0 < kKBlock ? L.k_pad - k0 : kKBlock;
    if (blk > 0) {
      launch_fold(L.prod, L.m_pad * L.n_pad, tb, st);
      OZDGEMM_CHECK_LAUNCH();
    }
    if (batched_gemms(call.batching, L.m_pad, L.n_pad, L.k_pad)) {
      int8_gemm(call.int8_handle, L.m_pad, L.n_pad, k0, klen, L.k_pad, L.res_a, L.res_b, L.prod,
                s, blk > 0);
    } else {
      for (int t = 0; t < s; ++t)
        int8_gemm(call.int8_handle, L.m_pad, L.n_pad, k0, klen, L.k_pad,
                  L.res_a + t * L.m_pad * L.k_pad, L.res_b + t * L.n_pad * L.k_pad,
                  L.prod + t * L.m_pad * L.n_pad, 1, blk > 0);
    }
  }
  if (ev != nullptr) record(ev->multiplied, st);

  // 4. Reduction + CRT + inverse scaling + alpha/beta.
  const crt_args args{L.prod,    L.m_pad,   L.n_pad, L.exp_a, L.exp_b,
                      L.flags_a, L.flags_b, p.a,     p.b};
  launch_crt(p, args, tb, call.alpha, call.beta, st);
  OZDGEMM_CHECK_LAUNCH();
  if (ev != nullptr) record(ev->finished, st);
}

}  // namespace ozdgemm::detail
