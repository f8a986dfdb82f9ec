// The certified and automatic moduli counts' inputs on the GPU (kernels/certify.cuh,
// kernels/scaling.cuh): the worst ratios of every s, the certificate's band GEMM and ratio pass,
// the chooser kernel's arguments, and the choice made on the host after one wait.
#pragma once

#include "choice.cuh"
#include "core/moduli_choice.hpp"
#include "engine/emulate.hpp"
#include "engine/layout.hpp"

namespace ozdgemm::detail {

// The statistics the choice reads: the worst ratios of every s (certified: also the certified
// bound over C, into the third row of L.worst). bands_in_residues (certified): the band planes
// come from the residue pass (launch_residues_and_bands) and the certificate itself from
// launch_certificate after it; enqueued here are its inputs up to the band drops.
void launch_choice_inputs(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                          bool bands_in_residues = false);

// The certificate (certified calls): the band GEMM over L.bands_a and L.bands_b and the worst
// certified ratio of every s, into the third row of L.worst.
void launch_certificate(const device_gemm& call, const layout& L, const int8_gemm_target& g);

// The chooser kernel's arguments for a certified call (kernels/choice.cuh), its count into
// L.chosen; no tally, no speculation, no outcome slot.
choose_args certified_choose_args(const device_gemm& call, const layout& L);

// The per-call count chosen on the host, between the scaling statistics and the exponents: the
// choice's inputs, one small copy to the host once the stream has reached them (the number of
// INT8 GEMMs to launch depends on the answer; at most kChoiceWaitSeconds, then waited_out),
// then the host's chooser. A certified call with an outcome slot also gets the chooser kernel's
// count there (engine/speculation.hpp), committed before the wait.
moduli_choice choose_on_device(const device_gemm& call, const layout& L, const int8_gemm_target& g);

}  // namespace ozdgemm::detail
