// The engine's INT8 GEMMs: C = A^T B with INT8 inputs and exact INT32 sums, over the moduli
// (one call per modulus, or one strided-batched call) and the k-blocks.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

namespace ozdgemm::detail {

// INT8 x INT8 -> INT32, C = A^T B (+ C when accumulate), over `batch` planes, for one k-block,
// on h's stream. All leading dimensions and offsets are multiples of 16 (tensor-core alignment).
//
// The sums are exact integers whatever algorithm computes them, so the algorithm is free to
// choose: a single GEMM (batch == 1) goes through cuBLASLt with the fastest of the algorithms
// its heuristic offers for this shape, timed once per (device, shape) on the first call that
// writes C (not accumulate) outside graph capture, and cached for the life of the process
// (bench/results/2026-11-29_h200_ed739f1_int8_probe: up to 1.10x over cublasGemmEx's own
// choice at 16384^3). Until a shape is tuned, and with OZDGEMM_GEMM_TUNING=off, it is
// cublasGemmEx's default algorithm. Throws cublas_error / cuda_error on failure.
void int8_gemm(cublasHandle_t h, int64_t m_pad, int64_t n_pad, int64_t k0, int64_t klen,
               int64_t k_pad, const int8_t* a, const int8_t* b, int32_t* c, int batch,
               bool accumulate);

}  // namespace ozdgemm::detail
