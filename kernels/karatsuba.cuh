// Launchers of the Karatsuba form's two passes (core/karatsuba.hpp), around its GEMMs
// (engine/emulate.cpp, karatsuba_gemms): the residue planes of Re + Im of both operands, and
// the combination of the three products into T's two parts.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/moduli.hpp"

namespace ozdgemm::detail {

// out[t][v][l] = x[t][v][l] + x[t][v][l + offset] mod m_t for the tb.s planes t (x's planes
// x_plane bytes apart, its vectors ld apart; out's planes out_plane apart, its vectors out_ld
// apart), v < vectors, l < width. out may lie in x's planes where nothing is read. width, ld,
// out_ld, offset and both plane sizes: multiples of 16.
void launch_residue_sums(const int8_t* x, int64_t x_plane, int64_t ld, int64_t offset,
                         int64_t vectors, int64_t width, const modulus_table& tb, int8_t* out,
                         int64_t out_plane, int64_t out_ld, cudaStream_t stream);

// Per plane t < tb.s of prod (plane elements apart), whose first `half` elements hold P1 and the
// next `half` P2, and of p3 (half elements apart): T_re into the first half and T_im into the
// second (karatsuba_parts). half: a multiple of 4.
void launch_karatsuba_combine(int32_t* prod, int64_t plane, const int32_t* p3, int64_t half,
                              const modulus_table& tb, cudaStream_t stream);

}  // namespace ozdgemm::detail
