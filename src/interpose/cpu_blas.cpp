#include "interpose/cpu_blas.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/env.hpp"
#include "common/lazy_library.hpp"
#include "common/logging.hpp"
#include "dispatch/settings.hpp"

namespace ozdgemm::detail {
namespace {

constexpr const char* kSystemBlas = "libblas.so.3";

// A definition inside libozdgemm.so would call straight back into the hook or forwarder that
// asked for it (defined_in_this_library). RTLD_NEXT never returns one, but a dlopen'd library
// can be this very file: libblas.so.3 installed as an alternative pointing here, or
// OZDGEMM_CPU_BLAS naming it.

// Opened once and never closed: its routines may be called until the process exits.
void* open_library(const char* name, bool configured) {
  // A library named by the environment is never loaded into a setuid/setgid process: that
  // would run the unprivileged caller's code with the process's privileges. settings()
  // already ignores the environment there (common/env.hpp); this keeps the rule explicit
  // should the name ever come from elsewhere.
  if (configured && secure_execution()) {
    logger().error("OZDGEMM_CPU_BLAS='{}' is not loaded in a setuid/setgid process", name);
    return nullptr;
  }
  void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* why = dlerror();
    if (configured)
      logger().error(
          "OZDGEMM_CPU_BLAS='{}' cannot be loaded ({}): BLAS calls that are not "
          "emulated will fail",
          name, why != nullptr ? why : "?");
    else
      logger().warn("no BLAS after libozdgemm.so in the process and {} cannot be loaded ({})", name,
                    why != nullptr ? why : "?");
  }
  return h;
}

void* configured_library() {
  static void* const h = open_library(settings().cpu_blas.c_str(), true);
  return h;
}

void* system_library() {
  static void* const h = open_library(kSystemBlas, false);
  return h;
}

// `name` in any object the process has loaded, outside libozdgemm.so: the libraries an object
// loaded with RTLD_LOCAL brought in (pip's numpy loads its bundled scipy-openblas so, below a
// Python extension module), which RTLD_NEXT, searching the global scope, does not see. In load
// order; null when none defines it. The handles stay open (the objects were loaded already).
void* loaded_definition(const char* name) {
  std::vector<std::string> files;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
        return 0;
      },
      &files);
  for (const std::string& file : files) {  // dlopen outside the iteration, which holds a lock
    void* h = dlopen(file.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (h == nullptr) continue;
    void* p = dlsym(h, name);
    if (p == nullptr || defined_in_this_library(p)) continue;
    // An object that defines the library's own API is a build of these hooks (libozdgemm.so, or
    // a test build beside it): calling it would come back here.
    Dl_info where{}, marker_where{};
    void* marker = dlsym(h, "ozdgemm_status_string");
    if (dladdr(p, &where) != 0 && marker != nullptr && dladdr(marker, &marker_where) != 0 &&
        marker_where.dli_fbase == where.dli_fbase)
      continue;
    return p;
  }
  return nullptr;
}

// Logs, once per library file, which CPU BLAS serves the calls the library does not emulate.
void announce(const void* p, const char* name, const char* how) {
  static std::mutex mutex;
  static std::set<std::string>* seen = new std::set<std::string>();  // leaked: used until exit
  Dl_info info{};
  const std::string file =
      (dladdr(p, &info) != 0 && info.dli_fname != nullptr) ? info.dli_fname : "?";
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!seen->insert(file).second) return;
  }
  logger().info("CPU BLAS: {} serves BLAS calls that are not emulated ({} found as {})", file, name,
                how);
}

}  // namespace

void* cpu_blas_symbol(const char* name, bool required) noexcept {
  try {
    const std::string& configured = settings().cpu_blas;
    void* p = nullptr;
    const char* how = nullptr;
    if (!configured.empty()) {
      if (void* h = configured_library()) {
        p = dlsym(h, name);
        how = "OZDGEMM_CPU_BLAS";
      }
    } else {
      p = dlsym(RTLD_NEXT, name);
      how = "the next definition in the process";
      if (p == nullptr || defined_in_this_library(p)) {
        p = loaded_definition(name);
        how = "a definition in a library the process loaded locally";
      }
      if (p == nullptr) {
        if (void* h = system_library()) {
          p = dlsym(h, name);
          how = "the system libblas.so.3";
        }
      }
    }
    if (p != nullptr && defined_in_this_library(p)) {
      logger().error(
          "{}: {} is libozdgemm.so itself (installed as the libblas alternative?); "
          "set OZDGEMM_CPU_BLAS to the real CPU BLAS",
          name, configured.empty() ? kSystemBlas : configured.c_str());
      return nullptr;
    }
    if (p == nullptr) {
      if (!required)
        logger().info("{}: not defined by the CPU BLAS", name);
      else if (!configured.empty())
        logger().error("{}: not found in OZDGEMM_CPU_BLAS='{}'{}", name, configured,
                       configured_library() != nullptr ? "" : " (it cannot be loaded, see above)");
      else
        logger().error(
            "{}: no CPU BLAS defines it (none loaded in the process besides libozdgemm.so, "
            "none in {}); set OZDGEMM_CPU_BLAS",
            name, kSystemBlas);
      return nullptr;
    }
    announce(p, name, how);
    return p;
  } catch (...) {
    return nullptr;  // logging failed; the caller reports the missing routine its own way
  }
}

std::string fortran_name(gemm_family f, const char* routine) {
  const bool scipy = f == gemm_family::scipy_lp64 || f == gemm_family::scipy_ilp64;
  return std::string(scipy ? "scipy_" : "") + routine + (is_ilp64(f) ? "_64_" : "_");
}

unsigned long long objects_loaded() noexcept {
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t size, void* out) {
        if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
          *static_cast<unsigned long long*>(out) = info->dlpi_adds;
        return 1;  // the counter is the same in every entry
      },
      &adds);
  return adds;
}

void* cpu_routine(const char* name, bool required) noexcept {
  static std::mutex mutex;
  static auto* found = new std::map<std::string, cpu_symbol>();  // leaked: used until exit
  try {
    cpu_symbol* s = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex);
      s = &(*found)[name];  // map nodes never move
    }
    return s->get(name, required);  // outside the lock: it may log and dlopen
  } catch (...) {
    return nullptr;
  }
}

}  // namespace ozdgemm::detail
