// alpha or beta as the handle's pointer mode gives it: a host value, or a device pointer that
// only kernels dereference (so device pointer mode never forces a host synchronisation).
#pragma once

#include "core/hd.hpp"

namespace ozdgemm::detail {

struct scalar_arg {
  const double* dev;  // non-null in device pointer mode
  double host;

  OZDGEMM_HD double get() const {
#if defined(__CUDA_ARCH__)
    return dev != nullptr ? *dev : host;
#else
    return host;
#endif
  }
};

}  // namespace ozdgemm::detail
