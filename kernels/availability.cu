#include "availability.cuh"

namespace ozdgemm::detail {
namespace {

// Compiled for the same architectures as every other kernel of the library (one fatbinary
// per translation unit, one architecture list for all), so it stands for them all.
__global__ void ozdgemm_image_probe() {}

}  // namespace

cudaError_t kernel_image_status() noexcept {
  cudaFuncAttributes attributes{};
  const cudaError_t e = cudaFuncGetAttributes(&attributes, ozdgemm_image_probe);
  if (e != cudaSuccess) (void)cudaGetLastError();
  return e;
}

}  // namespace ozdgemm::detail
