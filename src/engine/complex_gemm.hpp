// The GPU pipeline of one complex GEMM: the packs of op(A) into A' and op(B) into B*, the real
// pipeline (emulate.hpp) on T = A' B* with alpha 1 and beta 0, then the epilogue
// C = alpha T + beta C (core/complex_embedding.hpp), all on the call's stream, with no host
// synchronisation beyond the per-call choice's. A', B* and T live in the same workspace as
// the engine's arrays, after them, so one grow-only workspace serves the call.
#pragma once

#include <cstddef>

#include "core/complex_embedding.hpp"
#include "core/moduli_choice.hpp"
#include "engine/emulate.hpp"

namespace ozdgemm::detail {

// How the embedded product is multiplied: the Karatsuba form (core/karatsuba.hpp: 3 INT8 GEMMs
// of k' x n' halves per modulus) or the embedding's one real GEMM (the work of 4). The same
// bits; a matter of speed (bench/results/zgemm/). `automatic`: by size (uses_karatsuba);
// `setting`: the process-wide one.
enum class complex_form { setting = 0, automatic = 1, karatsuba = 2, four = 3 };

// OZDGEMM_ZGEMM_FORM's value: "karatsuba" or "four"; null: automatic; anything else: one
// warning, then automatic. Pure but for the warning.
complex_form complex_form_from_env_value(const char* value) noexcept;
// The process-wide form: set_complex_form_setting()'s, else OZDGEMM_ZGEMM_FORM read once.
complex_form complex_form_setting() noexcept;
// For the benchmark and the tests, which compare both forms in one process (`setting`: back
// to the environment). Calls sized before keep the form they were sized with.
void set_complex_form_setting(complex_form f) noexcept;

// Whether an m x n x k complex call with this scaling runs the Karatsuba form under `form`
// (`setting`: the process-wide one). Fast scaling only: its exponent of a column of B* depends on
// the column's magnitudes alone, so columns j and n' + j (Re B and Im B, which P3 adds) share
// one; accurate scaling's come from |A'| |B*|, which differs between the two. `automatic`: from
// m n' k' = 2^35 multiply-adds per product up. Measured on the H200 at the matched s
// (bench/results/zgemm/, runs 2-6): the Karatsuba form was 0.78x the four-product form's speed
// at 2048^3 (3 GEMMs too small to fill the GPU, and a combination pass it no longer has) and
// 1.02-1.21x from 4096^3 up (run 7, with the CRT combining the products: 1.09-1.28x).
bool uses_karatsuba(complex_form form, scaling_mode mode, int64_t m, int64_t n, int64_t k) noexcept;

struct complex_gemm {
  complex_problem p;  // device pointers; m, n, k > 0; 2n and 2k within the engine's limits
  complex_scalar_arg alpha, beta;
  // The embedded real call: moduli, mode, stream, target, backend, row_block as the caller
  // sets them; its problem, alpha and beta are the embedding's (set by enqueue_complex).
  device_gemm real;
  size_t engine_bytes = 0;  // the engine's share of the workspace (size_complex_workspace)
  // HERK and its kin: the imaginary parts of C's diagonal are set to zero (with real.part).
  bool real_diagonal = false;
};

// The workspace of `call`: the engine's for (m, 2n', 2k'), then A' (16 m k' bytes), B* (32 k' n')
// and T (16 m n'). Sets call->real's sizes, resolves its backend (size_workspace) and the form
// (call->real.karatsuba), and call->engine_bytes. False when the sizes cannot be counted.
bool size_complex_workspace(complex_gemm* call, size_t* bytes) noexcept;

// Enqueues packs, the real pipeline and the epilogue; returns the moduli count used, or 0 when
// the per-call choice ran no s: then only the packs and the scaling statistics were enqueued,
// C is untouched and the caller must run native ZGEMM. Throws cuda_error / cublas_error.
int enqueue_complex(const complex_gemm& call, void* workspace, moduli_choice* choice);

}  // namespace ozdgemm::detail
