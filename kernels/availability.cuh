// Whether this build of the library holds code the current GPU can run: machine code for its
// architecture (or a lower minor version of the same major), or PTX the driver can compile
// for it (the newest architecture's PTX ships for GPUs newer than the build).
#pragma once

#include <cuda_runtime.h>

namespace ozdgemm::detail {

// cudaSuccess, or the runtime's answer for a kernel of this library on the current device
// (cudaErrorNoKernelImageForDevice, cudaErrorInvalidDeviceFunction, or an error of the
// device itself). Clears the error it finds. Never throws.
cudaError_t kernel_image_status() noexcept;

}  // namespace ozdgemm::detail
