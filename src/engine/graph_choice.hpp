// The pipeline's side of a certified count chosen on the GPU in CUDA graph conditional nodes
// (engine/gpu_choice.hpp holds the graphs): under stream capture always, in eager calls only where
// a test asks for it. The plan names what each conditional reads and does; the enqueue runs the
// choice's inputs, the chooser kernel, the residues of the chosen count, a SWITCH of GEMMs per
// block of rows, the CRT, and an IF of native DGEMM.
#pragma once

#include <cublas_v2.h>

#include <string>
#include <vector>

#include "core/gemm_problem.hpp"
#include "engine/emulate.hpp"
#include "engine/int8_gemm.hpp"
#include "engine/layout.hpp"

namespace ozdgemm::detail {

// The conditionals of a call whose certified count is chosen on the GPU: one SWITCH of GEMMs per
// block of rows, and the IF of native DGEMM, each with its cache key and body.
struct gpu_plan {
  std::vector<std::string> switch_keys;  // per block of rows
  std::string native_key;
  cublasOperation_t ta, tb;
};

// The plan of `call` on its layout: each SWITCH's key (per block of rows) and the IF's.
gpu_plan plan_gpu_choice(const device_gemm& call, const layout& L, const int8_gemm_target& g);

// Whether every conditional of the plan can be had, before anything of the call is enqueued.
// A SWITCH made here (eager, first call of its shape) finds its GEMMs' cuBLASLt plans made first
// on the call's stream, timed as an eager call's are: nothing can be timed while its body is
// captured, and the heuristic's first is up to 15% slower (bench/results/probes/README.md).
bool gpu_choice_ready(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                      const gpu_plan& plan);

// The rest of a certified call whose count is chosen on the GPU (engine/gpu_choice.hpp), after
// the scaling statistics: the choice's inputs, the chooser kernel, then the exponents, residues
// and CRT of the chosen s (read from L.chosen), the GEMMs in a SWITCH on s per block of rows, and
// native DGEMM in an IF on s == 0. Nothing waits for the host.
int enqueue_gpu_chosen(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                       const operand_vectors& va, const gpu_plan& plan);

}  // namespace ozdgemm::detail
