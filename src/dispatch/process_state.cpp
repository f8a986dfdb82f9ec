#include "dispatch/process_state.hpp"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>

namespace ozdgemm::detail {
namespace {

// Set in the parent by the prepare handler, read by the child handler (same memory, copied by
// fork): plain atomics, no locks, so nothing here can deadlock in the child.
std::atomic<bool> driver_loaded_at_fork{false};
std::atomic<bool> forked_after_cuda{false};

void prepare() {
  // RTLD_NOLOAD only looks: it loads nothing and initialises nothing.
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  driver_loaded_at_fork.store(h != nullptr);
  if (h != nullptr) dlclose(h);
}

void child() {
  if (driver_loaded_at_fork.load()) forked_after_cuda.store(true);
}

// At load time: the application may fork before its first DGEMM, after initialising CUDA
// itself.
const int registered = pthread_atfork(prepare, nullptr, child);

}  // namespace

bool cuda_usable_in_this_process() noexcept {
  (void)registered;
  return !forked_after_cuda.load(std::memory_order_relaxed);
}

const char* cuda_unusable_reason() noexcept { return "forked child: CUDA unusable after fork"; }

}  // namespace ozdgemm::detail
