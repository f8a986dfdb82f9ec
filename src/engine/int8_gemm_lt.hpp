// The cuBLASLt backend of the INT8 GEMM stage (engine/int8_gemm.hpp): one plan per
// (device, GEMM shape), made once and cached for the life of the process:
//   - a matmul description (INT32 compute and scale, A transposed), the three matrix layouts
//     (strided batch included) and the algorithm;
//   - the algorithm is cublasLtMatmulAlgoGetHeuristic's first for the workspace the engine
//     reserved (int8_gemm_workspace_bytes) and the operands' actual alignment; for large GEMMs
//     (kTimedWork multiply-adds or more) the heuristic's first kTimedCandidates are timed once
//     on the caller's stream and the fastest kept (bench/results/probes/README.md
//     int8_probe: the heuristic's #2 was 1.105x faster than its #0 at 16384^3);
//   - for those timed shapes, whether cublasGemmEx serves it instead: the call int8_gemm()
//     makes without cuBLASLt is timed alongside the candidates, and when it is strictly faster
//     than all of them the plan hands the shape to it (narrow outputs with very long k: 1.5x
//     faster at 2048 x 2048 x 131056, bench/results/probes/README.md). A plan
//     that cannot be timed yet follows the choice timing made for the same GEMM at other
//     operand alignments (a long k's later, accumulating k-blocks: see below).
// Timing runs the candidates into C with beta = 0, so it happens only on a call that
// overwrites C (not an accumulating k-block), never while the stream is being captured into a
// CUDA graph, and costs one host synchronisation per timed shape. A shape first seen under
// capture (or accumulating) gets the heuristic's first (or cublasGemmEx, as above), marked to
// be timed by the next call that can. Steady state: a map lookup under a mutex, then one
// cublasLtMatmul on the caller's stream; no host synchronisation, nothing allocated,
// capturable.
//
// The cuBLASLt handle is the private cuBLAS handle, cast: cuBLAS documents that any valid
// cublasHandle_t may be used in place of a cublasLtHandle_t. libcublasLt.so.13 is loaded on
// first use with dlopen (libozdgemm.so does not NEED cuBLAS, common/cublas_api.hpp); loaded
// already as libcublas's dependency.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ozdgemm::detail {

// One INT8 GEMM as the engine issues it: C (m x n, ldc) = A^T B, A stored k x m (lda),
// B stored k x n (ldb), column-major, `batch` planes `stride_*` elements apart.
struct lt_gemm_shape {
  int64_t m, n, k, lda, ldb, ldc;
  int batch;
  int64_t stride_a, stride_b, stride_c;
};

// What lt_int8_gemm is asked for:
//   run            the GEMM, as described below;
//   in_graph_body  the same in the body of a CUDA graph conditional node (engine/gpu_choice.hpp),
//                  where the caller's cublasGemmEx would run without a workspace (1.7-1.9x
//                  slower on the H200, bench/results/probes/README.md): a shape for which timing
//                  chose cublasGemmEx runs cuBLASLt's fastest candidate instead;
//   plan_only      the plan alone (timed where a run would time it; timing writes A^T B into C),
//                  so that GEMMs captured later into such a body find a timed plan: nothing else
//                  is enqueued, and true is returned whenever a plan exists.
enum class lt_use { run, in_graph_body, plan_only };

// Runs the GEMM through cuBLASLt on `stream` with the workspace given; false when the lt
// backend could not serve it (cuBLASLt missing, no algorithm, or a failed call: logged, at
// warn level the first time per shape, counted in fallbacks) or when timing chose cublasGemmEx
// for the shape (logged at debug level when timed, counted in cublas_chosen), and then C holds
// what it held before, or (after a timing, which only happens when C is to be overwritten)
// A^T B: the caller runs cublasGemmEx instead, which writes the same bits either way. `handle`
// is bound to `stream` (timing runs cublasGemmEx on it). Never throws.
bool lt_int8_gemm(cublasHandle_t handle, cudaStream_t stream, const lt_gemm_shape& shape,
                  const int8_t* a, const int8_t* b, int32_t* c, bool accumulate, void* workspace,
                  size_t workspace_bytes, lt_use use = lt_use::run) noexcept;

// Process-wide counts, for the tests (that the lt backend really ran) and the debug log.
struct lt_counts {
  long long matmuls;    // cublasLtMatmul calls that served a GEMM
  long long fallbacks;  // GEMMs the lt backend handed back to cublasGemmEx: failures, no plan
  long long plans;      // plans made (a re-timed plan counts again)
  long long timed;      // plans whose algorithm was chosen by timing
  long long cublas_chosen;  // GEMMs handed to cublasGemmEx because timing found it faster
};
lt_counts lt_counts_now() noexcept;

// Test-only: the next `count` GEMMs the lt backend would serve fail as if cublasLtMatmul had
// refused them (before anything is enqueued), to prove the fallback.
void lt_fail_next_for_testing(int count) noexcept;

// Test-only: the next `count` plans chosen by timing hand their shape to cublasGemmEx whatever
// the times (provided it ran), to prove that path on a GPU where cuBLASLt wins.
void lt_prefer_cublas_next_for_testing(int count) noexcept;

}  // namespace ozdgemm::detail
