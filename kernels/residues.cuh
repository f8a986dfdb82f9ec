// Launcher of residue generation: x 2^e_v rounded to an integer (to nearest when `nearest`,
// else toward zero; scaling_rules.hpp says when) for every element, one exact integer
// conversion (no FP64 arithmetic), then s INT8 residues by integer multiply-high
// (core/element.hpp), written as INT8 planes [s][nvec_pad][k_pad] with zero padding; only the
// first v.k_written of each vector's k_pad when that is set.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/gemm_problem.hpp"
#include "core/karatsuba.hpp"
#include "core/moduli.hpp"

namespace ozdgemm::detail {

void launch_residues(const operand_vectors& v, const int* exps, const modulus_table& tb,
                     bool nearest, int8_t* planes, cudaStream_t stream);

// The same, and the certificate's kCertBands band planes of the vectors' largest exponents and
// band drops into band_planes (the bytes launch_band_planes writes, certify.cuh): one read of
// the operand for both. Every k of k_pad is written (v.k_written unset), or with `mirror` (the
// Karatsuba form's B*: 2 mirror.n columns, v.k_written = mirror.k of depth 2 mirror.k, column
// j + n' holding column j's halves swapped, one negated: core/complex_embedding.hpp) each run of
// the first halves also at the partner column (j + n' or j - n') and depth l + mirror.k, where
// the embedding holds the same magnitudes: the band planes of the whole embedding.
void launch_residues_and_bands(const operand_vectors& v, const int* exps, const modulus_table& tb,
                               bool nearest, const int* emax_enc, const int* drop, int8_t* planes,
                               int8_t* band_planes, cudaStream_t stream,
                               const karatsuba_halves& mirror = {});

// Loads launch_residues_and_bands' kernels on the current device (load_kernels,
// launch_common.cuh): only a speculated count, which must not wait, launches them.
cudaError_t load_residue_band_kernels();

// The same for the moduli count chosen on the GPU (*chosen; 0 writes nothing), rounded to
// nearest when bit s of nearest_mask is set.
void launch_chosen_residues(const operand_vectors& v, const int* exps, const int* chosen,
                            uint32_t nearest_mask, int8_t* planes, cudaStream_t stream);

}  // namespace ozdgemm::detail
