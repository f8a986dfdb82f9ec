// One emulation per batch of complex GEMMs: a strided batch of C_i = alpha op(A_i) op(B_i) + beta
// C_i of one shape at a fixed moduli count, each matrix embedded as the single complex call
// embeds it (core/complex_embedding.hpp), then the real batch through the batched engine
// (engine/batched_emulate.hpp):
//   1. one pack launch per operand over every matrix (A'_i, B*_i; a broadcast operand once);
//   2. the batched engine on T_i = A'_i B*_i with alpha 1 and beta 0, as the single complex call
//      runs its one real GEMM;
//   3. one epilogue launch over every C_i = alpha T_i + beta C_i.
// The embedded call is the single complex call's, and the batched engine gives each T_i the
// single real call's bits, so C_i is the single complex call's (ozdgemm_zgemm, same s and
// scaling) bit for bit; the single call's Karatsuba form, where its size takes it, gives the
// same bits as the embedding's one product that the batch runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/moduli_setting.hpp"
#include "core/scaling_rules.hpp"
#include "engine/batched_emulate.hpp"
#include "engine/complex_gemm.hpp"

namespace ozdgemm::detail {

// A strided batch for enqueue_batched_complex. call: matrix 0 (call.p: its operands and C), the
// scalars shared by all, and in call.real the fixed count, scaling, stream, private handle and
// INT8 GEMM backend (its problem, scalars and form are the embedding's, set here).
struct complex_gemm_batch {
  complex_gemm call;
  int64_t count;                         // matrices, 1..kMaxBatchChunk
  int64_t stride_a, stride_b, stride_c;  // complex elements between matrices; A or B: 0 broadcasts
};

// The real batch the embedding runs: m x 2n' x 2k' for the complex m x n x k of d.
batch_dims embedded_dims(const batch_dims& d) noexcept;

// The workspace of `count` complex matrices of d (the complex sizes): the batched engine's for the
// embedded dims, then the packs A' (one per matrix, or one for a broadcast A with fast scaling),
// B* (likewise) and every T_i, in bytes; false when a size overflows. Pure.
bool batched_complex_workspace_bytes(const batch_dims& d, int64_t count, size_t* bytes) noexcept;

// Matrices per chunk within `budget` bytes, as batch_chunk (0: not even one). Pure.
int64_t complex_batch_chunk(const batch_dims& d, int64_t count, size_t budget) noexcept;

// Why the batched engine cannot take complex calls of this shape and setting (a static string),
// or nullptr: the embedded shape's refusal (batch_engine_refusal). Pure apart from reading
// OZDGEMM_ROW_BLOCK once.
const char* complex_batch_engine_refusal(int64_t m, int64_t n, int64_t k, moduli_setting moduli,
                                         scaling_mode mode, int8_gemm_backend gemm) noexcept;

// Enqueues the whole batch on batch.call.real.stream with no host synchronisation and returns
// the moduli count. The workspace must hold batched_complex_workspace_bytes. Throws
// std::invalid_argument for a batch outside the engine's scope, cuda_error / cublas_error on
// failure.
int enqueue_batched_complex(const complex_gemm_batch& batch, void* workspace);

}  // namespace ozdgemm::detail
