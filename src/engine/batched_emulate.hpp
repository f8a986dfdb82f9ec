// One emulation per batch: a strided batch of real GEMMs of one shape (C_i = alpha op(A_i)
// op(B_i) + beta C_i) with a fixed moduli count, each pipeline pass run once over the whole batch
// instead of once per matrix (engine/emulate.hpp's pipeline per matrix costs about 15 launches
// and host work, which dominate small matrices in large batches):
//   1. one scan and one exponent launch per operand over every matrix's vectors (accurate
//      scaling: one bound-plane launch per operand, the bound GEMMs of every matrix as one
//      strided call per k-block, and the exponent kernels once over every matrix's U);
//   2. one residue launch per operand, planes [matrix][modulus][vector][k] (operand i's planes
//      laid out as one call's);
//   3. the batch * s INT8 GEMMs as strided-batched calls: one over all of them while one product
//      is small (batched_gemms' rule on one matrix's size), else one per modulus over the batch;
//   4. one CRT launch over every C_i.
// Every vector gets the scan, exponent and residue arithmetic of the single call, and every
// element of C_i its CRT: C_i is the single call's (enqueue_emulation, same s and scaling) bit
// for bit. With fast scaling A or B with stride 0 (a broadcast operand) is scanned and reduced
// once. Not here: automatic or certified counts (a choice per matrix), complex calls, matrices
// whose single call would run in blocks of rows of C (rule_row_block): those keep the
// per-matrix loop.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/moduli_setting.hpp"
#include "core/scaling_rules.hpp"
#include "engine/emulate.hpp"
#include "engine/int8_gemm.hpp"

namespace ozdgemm::detail {

// The most matrices one enqueue takes: the kernels index the matrix by a grid dimension.
inline constexpr int64_t kMaxBatchChunk = 65535;

// What a batch's workspace depends on. broadcast_a / broadcast_b: the operand's stride is 0,
// so with fast scaling one copy of its statistics and planes serves every matrix (accurate
// scaling: each matrix's exponents depend on both operands, so each matrix has its own).
// gemm: resolved (cublas or lt).
struct batch_dims {
  int64_t m, n, k;
  int s;
  bool broadcast_a, broadcast_b;
  int8_gemm_backend gemm;
  scaling_mode mode = scaling_mode::fast;
};

// A strided batch for enqueue_batched_emulation.
struct device_gemm_batch {
  // Matrix 0 (p: its operands and C), the scalars shared by all, the fixed count, the scaling,
  // stream, private handle, INT8 GEMM backend and batching, as for enqueue_emulation.
  device_gemm call;
  int64_t count;                         // matrices, 1..kMaxBatchChunk
  int64_t stride_a, stride_b, stride_c;  // elements between matrices; A or B: 0 is a broadcast
};

// The workspace of `count` matrices (the scaling arrays, the planes of both operands, the INT32
// products of every matrix, the lt backend's workspace), in bytes: false when a size overflows
// (or exceeds PTRDIFF_MAX), as emulation_workspace_bytes. Pure.
bool batched_emulation_workspace_bytes(const batch_dims& d, int64_t count, size_t* bytes) noexcept;

// Matrices per chunk: the most, at most min(count, kMaxBatchChunk), whose workspace fits `budget`
// bytes; 0 when not even one matrix fits (or the sizes overflow, or count < 1). Pure.
int64_t batch_chunk(const batch_dims& d, int64_t count, size_t budget) noexcept;

// The same for any workspace that grows with the number of matrices q: bytes_of(q, &bytes)
// sizes q matrices (false: the sizes overflow).
template <class BytesOf>
int64_t batch_chunk_by(int64_t count, size_t budget, BytesOf&& bytes_of) noexcept {
  if (count < 1) return 0;
  const auto fits = [&](int64_t q) {
    size_t bytes = 0;
    return bytes_of(q, &bytes) && bytes <= budget;
  };
  int64_t hi = count < kMaxBatchChunk ? count : kMaxBatchChunk;
  if (fits(hi)) return hi;
  if (!fits(1)) return 0;
  // The workspace grows with q: the largest q that fits lies in [lo, hi).
  int64_t lo = 1;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

// Why the batched engine cannot take calls of this shape and setting (a static string), or
// nullptr: it needs a fixed count, sizes within the GPU path, and the single call's
// products in one block of rows (no rule_row_block split, no OZDGEMM_ROW_BLOCK). Pure apart from
// reading OZDGEMM_ROW_BLOCK once (layout_for).
const char* batch_engine_refusal(int64_t m, int64_t n, int64_t k, moduli_setting moduli,
                                 scaling_mode mode, int8_gemm_backend gemm) noexcept;

// Whether one matrix's INT32 products (s m_pad n_pad 4 bytes) fit in half of an L2 cache of
// `l2_bytes`. Above that the engine is slower than one call per matrix, which finds most of
// each matrix's products still in the cache when its CRT reads them (H100, 50 MB: at s = 14,
// 32 x 1024^3 ran 4.6 ms one matrix per chunk, 5.7-6.5 ms two or more; 16 x 2048^3 7.7 against
// 11.6-12.1); below it the matrices' launches dominate and larger chunks win (64 x 512^3: 2.8 ms
// in one chunk, 5.0 in chunks of 2). Pure.
bool products_fit_cache(const batch_dims& d, size_t l2_bytes) noexcept;

// Enqueues the whole batch on batch.call.stream with no host synchronisation and returns the
// moduli count. The workspace must hold batched_emulation_workspace_bytes for the batch's dims.
// Throws std::invalid_argument for a batch outside the engine's scope (see above), cuda_error /
// cublas_error on failure.
int enqueue_batched_emulation(const device_gemm_batch& batch, void* workspace);

}  // namespace ozdgemm::detail
