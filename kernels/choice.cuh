// Launchers of the moduli count chosen on the GPU (engine/gpu_choice.hpp): the chooser kernel,
// which writes the certified count s (0: no s <= 20 serves, native DGEMM runs) where the rest of
// the call reads it; the exponents of that s; and the kernels that set a CUDA graph conditional
// node's value from it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace ozdgemm::detail {

// s -> *chosen from the certified ratios `worst` ([kMaxModuli + 1] double bits, the ratio of s
// at index s) by search_count (core/count_search.hpp) with the chooser's bounds. `tally`
// (optional, [kMaxModuli + 1]): ++tally[*chosen], the exit summary's histogram.
// speculative > 0: the host has already launched the GEMMs of that count (engine/speculation.hpp);
// *chosen is then that count when it meets the bound, else 0 (the fallback runs); < 0: *chosen is
// 0 (the certificate alone, for the host to learn from). speculative <= kMaxModuli. smallest
// (optional, may be mapped host memory): the smallest count that meets the bound (0: none), what
// the host learns for the shape's next call; written with a system-wide fence.
struct choose_args {
  const unsigned long long* worst;
  double target, native;
  bool relative_to_max;
  int* chosen;
  unsigned long long* tally;
  int speculative = 0;
  int* smallest = nullptr;
};
void launch_choose(const choose_args& a, cudaStream_t stream);

// exp[v] = exps_all[(s - kMinModuli) nvec + v] for the chosen s; nothing when s == 0.
void launch_select_exponents(const int* exps_all, int64_t nvec, const int* chosen, int* exp,
                             cudaStream_t stream);

// The value of a conditional node: SWITCH on s (body s runs), or IF s == 0 (native DGEMM).
enum class chosen_condition { count, native };
void launch_set_condition(cudaGraphConditionalHandle handle, const int* chosen,
                          chosen_condition condition, cudaStream_t stream);

// Loads this file's kernels on the current device (load_kernels, launch_common.cuh).
cudaError_t load_choice_kernels();

}  // namespace ozdgemm::detail
