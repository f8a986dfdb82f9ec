// First-use calibration of the performance model: the rates of dispatch/gpu_rates.hpp measured
// on the GPU itself with the library's own kernels and cuBLAS, briefly (a few hundred
// milliseconds on the slowest supported GPU, a few on an H200), and cached per GPU model,
// driver and library version in the user's cache folder, so that later processes, hundreds of
// MPI ranks included, read them instead of measuring again.
//
// The cache: one small text file per key under $XDG_CACHE_HOME/ozdgemm (else ~/.cache/ozdgemm),
// written to a temporary file in the same folder and renamed into place (a reader sees the old
// file or the whole new one, never a part), with an advisory lock (flock) that lets one process
// per key measure while the others wait for its file. In a setuid/setgid process the cache is
// not used (its folder belongs to the unprivileged caller).
#pragma once

#include <cstddef>
#include <string>

#include "dispatch/gpu_rates.hpp"

namespace ozdgemm::detail {

// What a cache file is for: the GPU model, the CUDA driver and the library version.
struct calibration_key {
  std::string gpu_name;
  int cc_major = 0, cc_minor = 0;
  int driver_version = 0;  // cudaDriverGetVersion
  std::string library_version;
};

// The file name of a key (letters, digits, '.', '_' and '-' only).
std::string calibration_file_name(const calibration_key& key);

// The cache folder: $XDG_CACHE_HOME/ozdgemm, else $HOME/.cache/ozdgemm; empty when neither is
// set (or in a secure-execution process, where both are ignored).
std::string calibration_cache_dir();

// The file's text for these rates, and back. parse_rates is false unless the text holds every
// rate, each a finite positive number, and the key it was written for is `key`.
std::string format_rates(const calibration_key& key, const gpu_rates& r);
bool parse_rates(const std::string& text, const calibration_key& key, gpu_rates* r);

// The cached rates of `key` in folder `dir`, if there are valid ones. Never throws.
bool load_cached_rates(const std::string& dir, const calibration_key& key, gpu_rates* r) noexcept;

// Writes them atomically (temporary file, then rename), creating `dir` (mode 0700) if needed.
// False, with *why set, on failure; nothing partial is ever visible. Never throws.
bool store_cached_rates(const std::string& dir, const calibration_key& key, const gpu_rates& r,
                        std::string* why) noexcept;

// Holds the advisory lock of `key` in `dir` while alive (waiting for it up to `wait_ms`);
// locked() is false when it could not be had (no folder, timeout): the caller then measures
// or not without it.
class calibration_lock {
 public:
  calibration_lock(const std::string& dir, const calibration_key& key, int wait_ms) noexcept;
  ~calibration_lock();
  calibration_lock(const calibration_lock&) = delete;
  calibration_lock& operator=(const calibration_lock&) = delete;
  bool locked() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Measures the rates of the current device (the process's host BLAS rate is the prior's: not
// measured). Uses at most `max_bytes` of device memory (and skips, returning false, when the
// measurement needs more), a private stream and cuBLAS handle, and synchronises only its own
// stream. False, with *why set, when it could not measure; never throws.
bool measure_rates(const gpu_rates& prior, size_t max_bytes, gpu_rates* measured,
                   std::string* why) noexcept;

// Device memory measure_rates needs.
size_t calibration_bytes() noexcept;

}  // namespace ozdgemm::detail
