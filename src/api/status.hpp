// The exception firewall of the C entry points: runs a callable, maps any exception to a
// status code and logs it once. Nothing thrown inside the library escapes through here.
// Running out of memory is logged at warn, not error: on a GPU shared by several processes it is
// an expected outcome that the caller handles (the interposer then runs the call natively), not
// a fault of the library.
#pragma once

#include <exception>
#include <new>
#include <stdexcept>

#include "common/error.hpp"
#include "common/logging.hpp"
#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::detail {

template <class F>
ozdgemm_status_t guarded(const char* where, F&& body) noexcept {
  try {
    return body();
  } catch (const cuda_error& e) {
    const bool oom = is_allocation_failure(e);
    logger().log(oom ? spdlog::level::warn : spdlog::level::err, "{}: {}", where, e.what());
    return oom ? OZDGEMM_STATUS_ALLOC_FAILED : OZDGEMM_STATUS_CUDA_ERROR;
  } catch (const cublas_error& e) {
    const bool oom = is_allocation_failure(e);
    logger().log(oom ? spdlog::level::warn : spdlog::level::err, "{}: {}", where, e.what());
    return oom ? OZDGEMM_STATUS_ALLOC_FAILED : OZDGEMM_STATUS_CUBLAS_ERROR;
  } catch (const std::invalid_argument& e) {
    logger().error("{}: {}", where, e.what());
    return OZDGEMM_STATUS_INVALID_VALUE;
  } catch (const std::bad_alloc&) {
    logger().warn("{}: out of host memory", where);
    return OZDGEMM_STATUS_ALLOC_FAILED;
  } catch (const std::exception& e) {
    logger().error("{}: {}", where, e.what());
    return OZDGEMM_STATUS_INTERNAL_ERROR;
  } catch (...) {
    logger().error("{}: unknown exception", where);
    return OZDGEMM_STATUS_INTERNAL_ERROR;
  }
}

}  // namespace ozdgemm::detail
