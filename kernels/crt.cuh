// Launchers of the output side: INT32 -> residue reduction fused into CRT reconstruction,
// inverse scaling and alpha/beta (the INT32 products are read once); the fold used between
// k-blocks; and C = beta C for k == 0 or alpha == 0.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/gemm_problem.hpp"
#include "core/moduli.hpp"
#include "core/scalar.hpp"

namespace ozdgemm::detail {

struct crt_args {
  // [s][n_pad][m_pad] exact INT32 products (k-block sums); m_pad: the rows of C this launch
  // covers (a block of rows, padded), p.m of them real.
  const int32_t* prod;
  int64_t m_pad, n_pad;
  const int* exp_a;
  const int* exp_b;
  const uint32_t* flags_a;
  const uint32_t* flags_b;
  operand a, b;  // re-read only for elements whose row or column holds Inf/NaN
  // The Karatsuba form (core/karatsuba.hpp): prod's planes hold P1 in columns [0, n') and P2 in
  // [n', 2n'), prod3 ([s][n'][m_pad]) holds P3, and each element's residues are combined here
  // (karatsuba_parts). Null for any other call.
  const int32_t* prod3 = nullptr;
  int64_t half_n = 0;  // n'
  // P2 was computed as Im op(A) (Im op(A))^T for op(B) = op(A)^H (B's residues are A's,
  // engine/pipeline.hpp's b_from_a): it is negated before the combination, giving P2's residue.
  bool negate_p2 = false;
  // A call computing one triangle of C (core/gemm_problem.hpp's c_part): elements (i, j) of this
  // launch with outside_part(part, i, j, diag) are neither read nor written. In the Karatsuba
  // form the columns j < cols of each half are computed (0: all n'); the products of column j
  // are in column j of the planes either way.
  int part = 0;
  int64_t diag = 0;
  int64_t cols = 0;
};

// only_if (optional, device memory): the kernel writes C only when *only_if == tb.s (a count
// speculated by the host and checked on the GPU, engine/speculation.hpp); otherwise it returns.
void launch_crt(const gemm_problem& p, const crt_args& args, const modulus_table& tb,
                scalar_arg alpha, scalar_arg beta, cudaStream_t stream,
                const int* only_if = nullptr);

// A batch of count C matrices of one shape (engine/batched_emulate.hpp; not the Karatsuba form):
// blockIdx.z is matrix i, computed as launch_crt computes one call's C from its products at
// args.prod + i prod_stride ([s][n_pad][m_pad], as one call's), its exponents and flags at
// + i vec_a and + i vec_b (0 for a broadcast operand), and p's A, B and C at + i stride_a,
// stride_b, stride_c elements. count <= 65535 (a grid dimension).
struct crt_batch {
  int64_t count, prod_stride, vec_a, vec_b, stride_a, stride_b, stride_c;
};
void launch_batched_crt(const gemm_problem& p, const crt_args& args, const crt_batch& batch,
                        const modulus_table& tb, scalar_arg alpha, scalar_arg beta,
                        cudaStream_t stream);

// The same, in either form, for the moduli count chosen on the GPU (*chosen; 0 leaves C alone:
// native DGEMM writes it), with the tables upload_chosen_tables put on the current device (before
// the first such launch; it waits for `stream`, so never under stream capture).
void launch_chosen_crt(const gemm_problem& p, const crt_args& args, const int* chosen,
                       scalar_arg alpha, scalar_arg beta, cudaStream_t stream);
cudaError_t upload_chosen_tables(cudaStream_t stream);
// Loads the kernels of a chosen count (launch_chosen_crt, fold, scale_c) on the current device
// (load_kernels, launch_common.cuh).
cudaError_t load_chosen_crt_kernels();

// prod[t][...] <- prod[t][...] mod m_t (in [0, m_t)), before the next k-block accumulates.
void launch_fold(int32_t* prod, int64_t plane, const modulus_table& tb, cudaStream_t stream);

// C = beta C (beta == 0: C = 0 without reading C).
void launch_scale_c(double* c, int64_t ldc, int64_t m, int64_t n, scalar_arg beta,
                    cudaStream_t stream);

}  // namespace ozdgemm::detail
