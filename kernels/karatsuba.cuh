// Launcher of the Karatsuba form's pass before its GEMMs (core/karatsuba.hpp, engine/pipeline.cpp,
// karatsuba_sums): the residue planes of Re + Im of both operands. The three products are
// combined in the CRT (crt.cuh, crt_args::prod3).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/moduli.hpp"

namespace ozdgemm::detail {

// out[t][v][l] = x[t][v][l] + x[t][v][l + offset] mod m_t for the tb.s planes t (x's planes
// x_plane bytes apart, its vectors ld apart; out's planes out_plane apart, its vectors out_ld
// apart), v < vectors, l < width. out may lie in x's planes where nothing is read. width, ld,
// out_ld, offset and both plane sizes: multiples of 16. chosen (may be null): the count chosen on
// the GPU (engine/gpu_choice.hpp); tb is then the table of kMaxModuli, whose first *chosen moduli
// are the chosen count's, and planes from *chosen on are left alone. subtract: x[..][l] -
// x[..][l + offset] instead (a HERK's Re - Im, engine/pipeline.hpp's b_from_a).
void launch_residue_sums(const int8_t* x, int64_t x_plane, int64_t ld, int64_t offset,
                         int64_t vectors, int64_t width, const modulus_table& tb, int8_t* out,
                         int64_t out_plane, int64_t out_ld, cudaStream_t stream,
                         const int* chosen = nullptr, bool subtract = false);

}  // namespace ozdgemm::detail
