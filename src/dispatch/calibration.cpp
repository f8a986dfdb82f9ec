#include "dispatch/calibration.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <sstream>
#include <thread>

#include "common/cublas_api.hpp"
#include "common/env.hpp"
#include "core/gemm_problem.hpp"
#include "core/moduli.hpp"
#include "core/scalar.hpp"
#include "core/scaling_rules.hpp"
#include "crt.cuh"
#include "engine/int8_gemm.hpp"
#include "residues.cuh"
#include "scaling.cuh"

namespace ozdgemm::detail {
namespace {

// The text of a rate in the file, and the rates in the order they are written.
struct rate_field {
  const char* name;
  double gpu_rates::*field;
};
constexpr rate_field kFields[] = {
    {"fp64", &gpu_rates::fp64},           {"int8", &gpu_rates::int8},
    {"prep_bw", &gpu_rates::prep_bw},     {"crt_bw", &gpu_rates::crt_bw},
    {"host_link", &gpu_rates::host_link},
};

std::string key_line(const calibration_key& k) {
  std::ostringstream o;
  o << "key " << calibration_file_name(k);
  return o.str();
}

bool mkdir_p(const std::string& dir) {
  if (dir.empty()) return false;
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    const std::string part = dir.substr(0, at);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  struct stat st {};
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::string calibration_file_name(const calibration_key& k) {
  std::string name;
  for (char c : k.gpu_name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    name += plain ? c : '_';
  }
  std::ostringstream o;
  o << name << "-sm" << k.cc_major << k.cc_minor << "-cuda" << k.driver_version << "-ozdgemm"
    << k.library_version << ".rates";
  return o.str();
}

std::string calibration_cache_dir() {
  if (const char* xdg = user_env("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/')
    return std::string(xdg) + "/ozdgemm";
  if (const char* home = user_env("HOME"); home != nullptr && home[0] == '/')
    return std::string(home) + "/.cache/ozdgemm";
  return std::string();
}

std::string format_rates(const calibration_key& k, const gpu_rates& r) {
  std::ostringstream o;
  o.precision(17);
  o << "# ozdgemm performance-model rates measured on " << k.gpu_name << " (compute capability "
    << k.cc_major << "." << k.cc_minor << ", CUDA driver " << k.driver_version << ", ozdgemm "
    << k.library_version << "); delete this file to measure again\n";
  o << key_line(k) << "\n";
  for (const rate_field& f : kFields) o << f.name << " " << r.*(f.field) << "\n";
  return o.str();
}

bool parse_rates(const std::string& text, const calibration_key& k, gpu_rates* out) {
  std::istringstream in(text);
  std::string line;
  bool key_ok = false;
  gpu_rates r;
  int found = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("key ", 0) == 0) {
      key_ok = line == key_line(k);
      continue;
    }
    const size_t space = line.find(' ');
    if (space == std::string::npos) return false;
    const std::string name = line.substr(0, space), value = line.substr(space + 1);
    const rate_field* f = std::find_if(std::begin(kFields), std::end(kFields),
                                       [&](const rate_field& x) { return name == x.name; });
    if (f == std::end(kFields)) return false;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(value.c_str(), &end);
    if (errno != 0 || end == value.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0)
      return false;
    r.*(f->field) = v;
    ++found;
  }
  if (!key_ok || found != static_cast<int>(std::size(kFields))) return false;
  *out = r;
  return true;
}

bool load_cached_rates(const std::string& dir, const calibration_key& k, gpu_rates* r) noexcept {
  try {
    if (dir.empty()) return false;
    const std::string path = dir + "/" + calibration_file_name(k);
    const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    std::string text;
    char buf[4096];
    ssize_t got = 0;
    while ((got = read(fd, buf, sizeof buf)) > 0 && text.size() < 65536)
      text.append(buf, static_cast<size_t>(got));
    close(fd);
    return parse_rates(text, k, r);
  } catch (...) {
    return false;
  }
}

bool store_cached_rates(const std::string& dir, const calibration_key& k, const gpu_rates& r,
                        std::string* why) noexcept {
  try {
    if (!mkdir_p(dir)) {
      *why = "cannot create " + dir + ": " + std::strerror(errno);
      return false;
    }
    const std::string path = dir + "/" + calibration_file_name(k);
    std::string tmp = path + ".XXXXXX";
    const int fd = mkostemp(tmp.data(), O_CLOEXEC);
    if (fd < 0) {
      *why = "cannot create a file in " + dir + ": " + std::strerror(errno);
      return false;
    }
    const std::string text = format_rates(k, r);
    bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ok = fsync(fd) == 0 && ok;
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp.c_str(), path.c_str()) == 0) return true;
    *why = "cannot write " + path + ": " + std::strerror(errno);
    unlink(tmp.c_str());
    return false;
  } catch (...) {
    *why = "out of memory";
    return false;
  }
}

calibration_lock::calibration_lock(const std::string& dir, const calibration_key& k,
                                   int wait_ms) noexcept {
  try {
    if (!mkdir_p(dir)) return;
    const std::string path = dir + "/" + calibration_file_name(k) + ".lock";
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    for (;;) {
      if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        fd_ = fd;
        return;
      }
      if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() >= until) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    close(fd);
  } catch (...) {
  }
}

calibration_lock::~calibration_lock() {
  if (fd_ >= 0) close(fd_);  // closing releases the lock
}

// ---------------------------------------------------------------------------------------------
// The measurement. Every step runs on one private stream, times itself with events, and keeps
// the fastest of three runs after a warm-up. The inputs are filled with a non-zero byte
// pattern (zeros can run faster than real data); no result is read. The sizes saturate an
// H200 and stay small: calibration_bytes() in all, reused from step to step.

namespace {

// DGEMM 2048^3 (96 MiB); INT8 GEMM 4096 x 4096 x 8192 (128 MiB and the lt workspace); the
// preparation passes over a 4096 x 4096 operand with 4 residue planes (192 MiB); the CRT of a
// 2048 x 2048 output from 4 INT32 planes (96 MiB); 64 MiB from pinned host memory.
constexpr int64_t kFp64N = 2048;
constexpr int64_t kInt8Mn = 4096, kInt8K = 8192;
constexpr int64_t kPrepN = 4096;
constexpr int64_t kCrtN = 2048;
constexpr int kCalibrationModuli = 4;
constexpr size_t kHostBytes = size_t{64} << 20;
constexpr size_t kPool = size_t{256} << 20;

class timed_stream {
 public:
  timed_stream() {
    ok_ = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) == cudaSuccess &&
          cudaEventCreate(&start_) == cudaSuccess && cudaEventCreate(&stop_) == cudaSuccess;
  }
  ~timed_stream() {
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (stop_ != nullptr) cudaEventDestroy(stop_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  timed_stream(const timed_stream&) = delete;
  timed_stream& operator=(const timed_stream&) = delete;
  bool ok() const { return ok_; }
  cudaStream_t stream() const { return stream_; }

  // Seconds of the fastest of 3 runs of `work` after one warm-up; a negative value when a
  // CUDA call failed.
  template <class F>
  double best_of_three(F&& work) {
    double best = -1;
    for (int run = 0; run < 4; ++run) {
      if (cudaEventRecord(start_, stream_) != cudaSuccess || !work() ||
          cudaEventRecord(stop_, stream_) != cudaSuccess ||
          cudaEventSynchronize(stop_) != cudaSuccess)
        return -1;
      float ms = 0;
      if (cudaEventElapsedTime(&ms, start_, stop_) != cudaSuccess) return -1;
      if (run > 0 && (best < 0 || ms * 1e-3 < best)) best = ms * 1e-3;
    }
    return best > 0 ? best : -1;
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  bool ok_ = false;
};

}  // namespace

size_t calibration_bytes() noexcept {
  return kPool + int8_gemm_workspace_bytes(int8_gemm_backend::lt, kInt8Mn, kInt8Mn);
}

bool measure_rates(const gpu_rates& prior, size_t max_bytes, gpu_rates* measured,
                   std::string* why) noexcept {
  try {
    const size_t lt_bytes = int8_gemm_workspace_bytes(int8_gemm_backend::lt, kInt8Mn, kInt8Mn);
    if (calibration_bytes() > max_bytes) {
      *why = "it needs " + std::to_string(calibration_bytes() >> 20) + " MiB of device memory";
      return false;
    }
    timed_stream ts;
    if (!ts.ok()) {
      (void)cudaGetLastError();
      *why = "no stream or event";
      return false;
    }
    const cudaStream_t st = ts.stream();
    char* pool = nullptr;
    void* host = nullptr;
    cublasHandle_t handle = nullptr;
    struct release {
      char*& pool;
      void*& host;
      cublasHandle_t& handle;
      cudaStream_t st;
      ~release() {
        if (st != nullptr) cudaStreamSynchronize(st);
        if (pool != nullptr) cudaFree(pool);
        if (host != nullptr) cudaFreeHost(host);
        if (handle != nullptr) cublas_destroy(handle);
        (void)cudaGetLastError();
      }
    } guard{pool, host, handle, st};
    if (cudaMalloc(&pool, kPool + lt_bytes) != cudaSuccess ||
        cudaMallocHost(&host, kHostBytes) != cudaSuccess ||
        cublas_create(&handle) != CUBLAS_STATUS_SUCCESS ||
        cublas_set_stream(handle, st) != CUBLAS_STATUS_SUCCESS ||
        cudaMemsetAsync(pool, 0x3F, kPool, st) != cudaSuccess) {
      *why = "its buffers or cuBLAS handle could not be had";
      return false;
    }
    std::memset(host, 0x3F, kHostBytes);
    gpu_rates r = prior;

    // Native DGEMM.
    {
      const double* a = reinterpret_cast<const double*>(pool);
      const double* b = a + kFp64N * kFp64N;
      double* c = const_cast<double*>(b + kFp64N * kFp64N);
      const double one = 1.0, zero = 0.0;
      const double t = ts.best_of_three([&] {
        return cublas_dgemm_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, kFp64N, kFp64N, kFp64N, &one, a,
                               kFp64N, b, kFp64N, &zero, c, kFp64N) == CUBLAS_STATUS_SUCCESS;
      });
      if (t <= 0) {
        *why = "the DGEMM failed";
        return false;
      }
      r.fp64 = 2.0 * kFp64N * kFp64N * kFp64N / t;
    }
    // The INT8 GEMMs, through the engine's backend.
    {
      const int8_t* a = reinterpret_cast<const int8_t*>(pool);
      const int8_t* b = a + kInt8Mn * kInt8K;
      int32_t* c = reinterpret_cast<int32_t*>(pool + 2 * kInt8Mn * kInt8K);
      const int8_gemm_backend backend = int8_gemm_setting();
      const int8_gemm_target g{handle, st, backend,
                               backend == int8_gemm_backend::lt ? pool + kPool : nullptr,
                               backend == int8_gemm_backend::lt ? lt_bytes : 0};
      const double t = ts.best_of_three([&] {
        int8_gemm(g, kInt8Mn, kInt8Mn, 0, kInt8K, kInt8K, a, kInt8Mn * kInt8K, b, c, 1, false);
        return true;
      });
      if (t <= 0) {
        *why = "the INT8 GEMM failed";
        return false;
      }
      r.int8 = 2.0 * kInt8Mn * kInt8Mn * kInt8K / t;
    }
    // The preparation passes of one operand, fast scaling, as the model counts them: three
    // 8-byte reads and s bytes written per element.
    {
      const double* x = reinterpret_cast<const double*>(pool);
      char* scratch = pool + kPrepN * kPrepN * 8;
      int8_t* planes = reinterpret_cast<int8_t*>(scratch);
      char* small = scratch + kCalibrationModuli * kPrepN * kPrepN;
      int* emax = reinterpret_cast<int*>(small);
      uint32_t* flags = reinterpret_cast<uint32_t*>(small + kPrepN * 4);
      unsigned long long* sum_q2 = reinterpret_cast<unsigned long long*>(small + kPrepN * 8);
      int* exps = reinterpret_cast<int*>(small + kPrepN * 16);
      const modulus_table& tb = moduli_for(kCalibrationModuli);
      const operand_vectors v{operand{x, kPrepN, true}, kPrepN, kPrepN, nullptr, kPrepN, kPrepN};
      const double t = ts.best_of_three([&] {
        if (cudaMemsetAsync(small, 0, kPrepN * 16, st) != cudaSuccess) return false;
        launch_vector_scan(v, emax, flags, st);
        launch_norm_scan(v, emax, sum_q2, st);
        launch_fast_exponents(kPrepN, emax, sum_q2, tb, exps, st);
        launch_residues(v, exps, tb, rounds_to_nearest(tb, kPrepN), planes, st);
        return cudaGetLastError() == cudaSuccess;
      });
      if (t <= 0) {
        *why = "the preparation kernels failed";
        return false;
      }
      r.prep_bw = static_cast<double>(kPrepN) * kPrepN * (3 * 8.0 + kCalibrationModuli) / t;
    }
    // The CRT of one output, beta = 0, as the model counts it: 4 s + 8 bytes per element.
    {
      const int32_t* prod = reinterpret_cast<const int32_t*>(pool);
      double* c = reinterpret_cast<double*>(pool + kCalibrationModuli * 4 * kCrtN * kCrtN);
      char* small = pool + kCalibrationModuli * 4 * kCrtN * kCrtN + 8 * kCrtN * kCrtN;
      int* exps = reinterpret_cast<int*>(small);
      uint32_t* flags = reinterpret_cast<uint32_t*>(small + kCrtN * 4);
      const modulus_table& tb = moduli_for(kCalibrationModuli);
      const operand op{c, kCrtN, true};  // read only for rows or columns flagged non-finite
      const gemm_problem p{kCrtN, kCrtN, kCrtN, op, op, c, kCrtN};
      const crt_args args{prod, kCrtN, kCrtN, exps, exps, flags, flags, op, op};
      const double t = ts.best_of_three([&] {
        if (cudaMemsetAsync(small, 0, kCrtN * 8, st) != cudaSuccess) return false;
        launch_crt(p, args, tb, scalar_arg{nullptr, 1.0}, scalar_arg{nullptr, 0.0}, st);
        return cudaGetLastError() == cudaSuccess;
      });
      if (t <= 0) {
        *why = "the CRT kernel failed";
        return false;
      }
      r.crt_bw = static_cast<double>(kCrtN) * kCrtN * (4.0 * kCalibrationModuli + 8.0) / t;
    }
    // The host link: pinned host memory to the device.
    {
      const double t = ts.best_of_three([&] {
        return cudaMemcpyAsync(pool, host, kHostBytes, cudaMemcpyHostToDevice, st) == cudaSuccess;
      });
      if (t <= 0) {
        *why = "the host-to-device copy failed";
        return false;
      }
      r.host_link = static_cast<double>(kHostBytes) / t;
    }
    r.source = "calibrated";
    *measured = r;
    return true;
  } catch (const std::exception& e) {
    (void)cudaGetLastError();
    *why = e.what();
    return false;
  } catch (...) {
    (void)cudaGetLastError();
    *why = "unknown error";
    return false;
  }
}

}  // namespace ozdgemm::detail
