// Prints, one "key=value" per line on stdout, what the library made of its environment:
// secure-execution mode, the settings (dispatch/settings), and which library serves dgemm_
// (interpose/cpu_blas). Logs one info and one warn message through the library's logger.
// security_test.sh runs it with hostile settings, plainly and as a setgid program.
//
// It links the library's objects statically: a setgid program ignores LD_PRELOAD,
// LD_LIBRARY_PATH and $ORIGIN run paths, so libozdgemm.so could not be found there.
#include <dlfcn.h>

#include <cstdio>

#include "common/env.hpp"
#include "common/logging.hpp"
#include "dispatch/settings.hpp"
#include "interpose/cpu_blas.hpp"

// ASan builds (scripts/sanitize.sh): LeakSanitizer cannot stop the world in a non-dumpable
// (setgid) process and would fail the run; it stays on for the plain runs.
extern "C" int __lsan_is_turned_off() { return ozdgemm::detail::secure_execution() ? 1 : 0; }

int main() {
  using namespace ozdgemm::detail;
  std::printf("secure=%d\n", secure_execution() ? 1 : 0);
  const config& c = settings();
  std::printf("mode=%s\n", to_string(c.mode));
  if (c.moduli.is_fixed())
    std::printf("moduli=%d\n", c.moduli.count());
  else
    std::printf("moduli=%s\n", c.moduli.is_certified() ? "certified" : "auto");
  std::printf("cpu_blas=%s\n", c.cpu_blas.c_str());
  logger().info("probe: info message");
  logger().warn("probe: warn message");
  void* p = cpu_blas_symbol("dgemm_");
  Dl_info info{};
  const char* from = (p != nullptr && dladdr(p, &info) != 0 && info.dli_fname != nullptr)
                         ? info.dli_fname
                         : "(none)";
  std::printf("dgemm_from=%s\n", from);
  std::fflush(stdout);
  return 0;
}
