#include "choice.cuh"

#include "core/count_search.hpp"
#include "core/hd.hpp"
#include "core/moduli.hpp"
#include "launch_common.cuh"

namespace ozdgemm::detail {
namespace {

__global__ void choose_kernel(choose_args a) {
  const auto eps = [&](int s) { return bits_double(a.worst[s]); };
  const count_search r = search_count(a.target, a.relative_to_max, a.native, eps);
  // The launched count runs when it is certified itself (eps is non-increasing in s, so any count
  // from r.s up is; the test does not rely on it).
  const int runs = a.speculative == 0                          ? r.s
                   : a.speculative < 0                         ? 0
                   : r.s != 0 && eps(a.speculative) <= r.bound ? a.speculative
                                                               : 0;
  *a.chosen = runs;
  if (a.tally != nullptr) atomicAdd(a.tally + runs, 1ull);
  if (a.smallest != nullptr) {
    *a.smallest = r.s;
    __threadfence_system();
  }
}

__global__ void select_exponents_kernel(const int* exps_all, int64_t nvec, const int* chosen,
                                        int* exp) {
  const int s = *chosen;
  if (s == 0) return;
  const int* from = exps_all + static_cast<int64_t>(s - kMinModuli) * nvec;
  for (int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < nvec;
       v += static_cast<int64_t>(gridDim.x) * blockDim.x)
    exp[v] = from[v];
}

__global__ void set_condition_kernel(cudaGraphConditionalHandle handle, const int* chosen,
                                     chosen_condition condition) {
  const int s = *chosen;
  cudaGraphSetConditional(handle, condition == chosen_condition::count
                                      ? static_cast<unsigned>(s)
                                      : static_cast<unsigned>(s == 0));
}

}  // namespace

void launch_choose(const choose_args& a, cudaStream_t stream) {
  choose_kernel<<<1, 1, 0, stream>>>(a);
}

void launch_select_exponents(const int* exps_all, int64_t nvec, const int* chosen, int* exp,
                             cudaStream_t stream) {
  select_exponents_kernel<<<grid_dim(nvec, 256, 1024), 256, 0, stream>>>(exps_all, nvec, chosen,
                                                                        exp);
}

cudaError_t load_choice_kernels() {
  return load_kernels(choose_kernel, select_exponents_kernel, set_condition_kernel);
}

void launch_set_condition(cudaGraphConditionalHandle handle, const int* chosen,
                          chosen_condition condition, cudaStream_t stream) {
  set_condition_kernel<<<1, 1, 0, stream>>>(handle, chosen, condition);
}

}  // namespace ozdgemm::detail
