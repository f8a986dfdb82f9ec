// The certified count of an eager device call, chosen on the GPU with no host wait (the
// default of device calls). The host launches the residues, INT8 GEMMs and CRT of a count it
// already has, the largest of the shape's recent certified counts (moduli_history::speculate); the
// GPU certifies that count for the call's own data; the CRT runs when it is certified, an FP64
// GEMM (kernels/fallback_gemm.cuh) when it is not or when no count serves. The chooser kernel
// also writes the smallest certified count into a slot of mapped host memory; an event recorded
// after the call tells a later call, which polls it, that the outcome is there, and the shape's
// history learns it. A shape's first call, which has no count to launch, chooses on the host
// (one wait).
//
// This file holds the outcome slots: per device a fixed pool of mapped host integers and their
// events, one per call in flight. Thread-safe; never waits.
#pragma once

#include <cuda_runtime.h>

#include "engine/moduli_history.hpp"

namespace ozdgemm::detail {

// A slot for the outcome of a call of `key` on the current device: the address the chooser
// kernel writes to (device-visible, mapped host memory); null when every slot of the device is
// in flight (the call then runs without teaching the history) or CUDA cannot make them.
int* reserve_outcome(const history_key& key) noexcept;
// Once the call's work is enqueued on `stream` (the current device's): the event the host polls.
// On failure the slot is released and nothing is learnt.
void commit_outcome(int* slot, cudaStream_t stream) noexcept;
// The slot was not committed (the call enqueued no chooser): it is free again. Nothing for a
// committed slot.
void release_outcome(int* slot) noexcept;
// Moves every outcome the GPU has delivered into process_moduli_history(); returns how many.
// Polls the events, never waits.
int harvest_outcomes() noexcept;

}  // namespace ozdgemm::detail
