// Side-by-side FP64 GEMM benchmark, C = A B (alpha = 1, beta = 0, column-major, no transpose):
// native cuBLAS DGEMM, cuBLAS's own FP64 emulation (optional) and ozdgemm for every moduli
// count x scaling mode, all in one run per shape on the same inputs (DESIGN.md section 3).
//
// Per method: median and min time over CUDA-event-timed calls on one stream, effective
// TFLOPS = 2mnk / median, speedup over native, and the error against a double-double host
// reference on --samples random (i, j) positions. With --stages, a separate instrumented run
// of the internal pipeline gives the stage split of each ozdgemm configuration.
//
//   ozdgemm_bench [--shapes 4096,8192x8192x4096] [--moduli 14,16,18,20] [--modes fast,accurate]
//                 [--phi 0.5] [--reps N] [--warmup 2] [--csv FILE] [--[no-]stages]
//                 [--[no-]cublas-emu] [--emu-bits 55] [--samples 512] [--seed 1]
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <library_types.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "core/gemm_problem.hpp"
#include "core/scalar.hpp"
#include "core/scaling_rules.hpp"
#include "engine/emulate.hpp"
#include "ozdgemm/ozdgemm.hpp"

namespace {

using ozdgemm::detail::scaling_mode;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kMinReps = 5;           // adaptive rep count: at least this many timed calls,
constexpr int kMaxReps = 50;          // at most this many,
constexpr double kTargetMs = 1000.0;  // and about this much timed work per method
constexpr int kStageReps = 5;         // instrumented runs per configuration (after one warm-up)
constexpr int kMaxCopies = 64;        // input sets when rotating
constexpr size_t kGatherBytes = size_t{64} << 20;  // bound on the reference's staging buffers

// ---------------------------------------------------------------------------------------------
// Command line.

struct shape {
  int64_t m, n, k;
};

struct bench_args {
  std::vector<shape> shapes{{4096, 4096, 4096}};
  std::vector<int> moduli{14, 16, 18, 20};
  std::vector<scaling_mode> modes{scaling_mode::fast, scaling_mode::accurate};
  double phi = 0.5;
  int reps = 0;  // 0: adaptive
  int warmup = 2;
  std::string csv;
  bool stages = false;
  bool cublas_emu = false;
  int emu_bits = 55;
  int samples = 512;
  uint64_t seed = 1;
};

constexpr const char* kUsage =
    "usage: ozdgemm_bench [--shapes 4096,8192x8192x4096,...] [--moduli 14,16,18,20]\n"
    "         [--modes fast,accurate] [--phi 0.5] [--reps N (default adaptive)]\n"
    "         [--warmup 2] [--csv FILE] [--[no-]stages] [--[no-]cublas-emu] [--emu-bits 55]\n"
    "         [--samples 512] [--seed 1]\n"
    "  later flags override earlier ones; errors are sampled at --samples positions\n";

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "ozdgemm_bench: %s\n%s", msg.c_str(), kUsage);
  std::exit(EXIT_FAILURE);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

int64_t parse_int(const std::string& s, int64_t lo, int64_t hi, const char* what) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end == nullptr || *end != '\0' || errno != 0 || v < lo || v > hi)
    usage_error(std::string("bad ") + what + " '" + s + "' (want an integer in [" +
                std::to_string(lo) + ", " + std::to_string(hi) + "])");
  return v;
}

double parse_double(const std::string& s, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == nullptr || *end != '\0' || !std::isfinite(v))
    usage_error(std::string("bad ") + what + " '" + s + "'");
  return v;
}

// cublasDgemm takes int sizes.
shape parse_shape(const std::string& s) {
  const std::vector<std::string> parts = split(s, 'x');
  if (parts.size() == 1) {
    const int64_t n = parse_int(parts[0], 1, INT_MAX, "shape");
    return shape{n, n, n};
  }
  if (parts.size() != 3) usage_error("bad shape '" + s + "' (want n or MxNxK)");
  return shape{parse_int(parts[0], 1, INT_MAX, "shape M"),
               parse_int(parts[1], 1, INT_MAX, "shape N"),
               parse_int(parts[2], 1, INT_MAX, "shape K")};
}

bench_args parse_args(int argc, char** argv) {
  bench_args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(EXIT_SUCCESS);
    } else if (flag == "--shapes") {
      a.shapes.clear();
      for (const auto& s : split(value(), ',')) a.shapes.push_back(parse_shape(s));
    } else if (flag == "--moduli") {
      a.moduli.clear();
      for (const auto& s : split(value(), ','))
        a.moduli.push_back(static_cast<int>(parse_int(s, 2, 20, "moduli count")));
    } else if (flag == "--modes") {
      a.modes.clear();
      for (const auto& s : split(value(), ',')) {
        if (s == "fast") {
          a.modes.push_back(scaling_mode::fast);
        } else if (s == "accurate") {
          a.modes.push_back(scaling_mode::accurate);
        } else {
          usage_error("bad mode '" + s + "' (want fast or accurate)");
        }
      }
    } else if (flag == "--phi") {
      a.phi = parse_double(value(), "phi");
    } else if (flag == "--reps") {
      a.reps = static_cast<int>(parse_int(value(), 1, 1000, "reps"));
    } else if (flag == "--warmup") {
      a.warmup = static_cast<int>(parse_int(value(), 0, 1000, "warmup"));
    } else if (flag == "--csv") {
      a.csv = value();
    } else if (flag == "--stages" || flag == "--no-stages") {
      a.stages = flag == "--stages";
    } else if (flag == "--cublas-emu" || flag == "--no-cublas-emu") {
      a.cublas_emu = flag == "--cublas-emu";
    } else if (flag == "--emu-bits") {
      a.emu_bits = static_cast<int>(parse_int(value(), 1, 1000, "emu-bits"));
    } else if (flag == "--samples") {
      a.samples = static_cast<int>(parse_int(value(), 1, 1 << 20, "samples"));
    } else if (flag == "--seed") {
      a.seed = static_cast<uint64_t>(parse_int(value(), 0, LLONG_MAX, "seed"));
    } else {
      usage_error("unknown argument '" + flag + "'");
    }
  }
  if (a.shapes.empty() || a.moduli.empty() || a.modes.empty())
    usage_error("--shapes, --moduli and --modes need at least one value");
  return a;
}

const char* mode_name(scaling_mode m) { return m == scaling_mode::fast ? "fast" : "accurate"; }

// ---------------------------------------------------------------------------------------------
// RAII for the CUDA/cuBLAS objects, so every exit path frees what it made. Constructors throw
// (OZDGEMM_CUDA_TRY / OZDGEMM_CUBLAS_TRY, with file:line); destructors never throw.

template <class T>
class device_array {
 public:
  device_array() = default;
  explicit device_array(size_t count) : count_(count) {
    if (count > 0) OZDGEMM_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
  }
  ~device_array() {
    if (ptr_ != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaFree(ptr_));
  }
  device_array(device_array&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  device_array& operator=(device_array&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  T* get() const { return ptr_; }
  size_t size() const { return count_; }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

class cuda_stream {
 public:
  cuda_stream() { OZDGEMM_CUDA_TRY(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~cuda_stream() {
    OZDGEMM_CUDA_TRY_NOTHROW(cudaStreamSynchronize(s_));
    OZDGEMM_CUDA_TRY_NOTHROW(cudaStreamDestroy(s_));
  }
  cuda_stream(const cuda_stream&) = delete;
  cuda_stream& operator=(const cuda_stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// Events with timing enabled (default flags).
class event_pool {
 public:
  explicit event_pool(size_t count) : ev_(count, nullptr) {
    for (auto& e : ev_) OZDGEMM_CUDA_TRY(cudaEventCreate(&e));
  }
  ~event_pool() {
    for (auto e : ev_)
      if (e != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaEventDestroy(e));
  }
  event_pool(const event_pool&) = delete;
  event_pool& operator=(const event_pool&) = delete;
  cudaEvent_t operator[](size_t i) const { return ev_.at(i); }
  size_t size() const { return ev_.size(); }

 private:
  std::vector<cudaEvent_t> ev_;
};

// A cuBLAS handle bound to `stream`. ozdgemm may have cached a private handle and workspace
// for it: those are released first, as ozdgemm.h asks.
class cublas_handle {
 public:
  explicit cublas_handle(cudaStream_t stream) {
    OZDGEMM_CUBLAS_TRY(cublasCreate(&h_));
    const cublasStatus_t st = cublasSetStream(h_, stream);
    if (st != CUBLAS_STATUS_SUCCESS) {
      cublasDestroy(h_);
      OZDGEMM_CUBLAS_TRY(st);
    }
  }
  ~cublas_handle() {
    if (h_ == nullptr) return;
    ozdgemm_release_handle(h_);
    const cublasStatus_t st = cublasDestroy(h_);
    if (st != CUBLAS_STATUS_SUCCESS)
      std::fprintf(stderr, "ozdgemm_bench: cublasDestroy: %s\n", cublasGetStatusString(st));
  }
  cublas_handle(const cublas_handle&) = delete;
  cublas_handle& operator=(const cublas_handle&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

float elapsed_ms(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0.0f;
  OZDGEMM_CUDA_TRY(cudaEventElapsedTime(&ms, from, to));
  return ms;
}

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// After a failure we handled: drain the stream and clear the runtime's last-error slot, so a
// later cudaGetLastError() (the library checks launches with it) does not report our error.
void recover(cudaStream_t stream) {
  (void)cudaStreamSynchronize(stream);
  (void)cudaGetLastError();
}

// ---------------------------------------------------------------------------------------------
// Inputs, generated on the GPU: entry (U - 0.5) exp(phi N(0,1)), U uniform in (0,1), from a
// counter-based generator (splitmix64 of key + 3 index + {0,1,2}), so the data depend only on
// (seed, copy, matrix, index) and not on the launch configuration.

__host__ __device__ inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// In (0, 1): 53 random bits plus one half ulp, so never 0, never 1 and never exactly 1/2.
__host__ __device__ inline double unit_open(uint64_t h) {
  return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
}

__global__ void fill_random_kernel(double* p, int64_t count, uint64_t key, double phi) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const uint64_t c = key + 3 * static_cast<uint64_t>(i);
    const double u = unit_open(splitmix64(c));
    const double u1 = unit_open(splitmix64(c + 1));
    const double u2 = unit_open(splitmix64(c + 2));
    const double z = sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);  // Box-Muller
    p[i] = (u - 0.5) * exp(phi * z);
  }
}

// out[s len + l] = src[idx[s] vstride + l lstride]: rows of A (vstride 1, lstride lda),
// columns of B (vstride ldb, lstride 1).
__global__ void gather_vectors_kernel(const double* src, int64_t vstride, int64_t lstride,
                                      int64_t len, const int64_t* idx, int64_t count, double* out) {
  const int64_t total = count * len;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += stride) {
    const int64_t s = t / len;
    const int64_t l = t - s * len;
    out[t] = src[idx[s] * vstride + l * lstride];
  }
}

__global__ void gather_entries_kernel(const double* c, int64_t ldc, const int64_t* ii,
                                      const int64_t* jj, int64_t count, double* out) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < count) out[t] = c[ii[t] + jj[t] * ldc];
}

int grid_for(int64_t work) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>((work + 255) / 256, 1 << 16)));
}

uint64_t matrix_key(uint64_t seed, int copy, int which) {
  return splitmix64(splitmix64(seed) ^ (static_cast<uint64_t>(copy) * 4 + which));
}

void fill_random(double* p, int64_t count, uint64_t key, double phi, cudaStream_t stream) {
  fill_random_kernel<<<grid_for(count), 256, 0, stream>>>(p, count, key, phi);
  OZDGEMM_CHECK_LAUNCH();
}

// One set of operands, column-major with lda = m, ldb = k, ldc = m.
struct input_set {
  device_array<double> a, b, c;
};

// ---------------------------------------------------------------------------------------------
// Accuracy: a double-double reference (Ogita-Rump-Oishi Dot2: TwoProd by fma, TwoSum) for the
// sampled entries, computed on the host from the sampled rows of A and columns of B.

struct sample_ref {
  double value;    // C_ij to about 2^-106 relative to (|A||B|)_ij
  double abs_dot;  // (|A||B|)_ij
};

sample_ref dot2(const double* x, const double* y, int64_t len) {
  double s = 0.0, c = 0.0, abs_sum = 0.0;
  for (int64_t l = 0; l < len; ++l) {
    const double p = x[l] * y[l];
    const double pe = std::fma(x[l], y[l], -p);  // exact: x y = p + pe
    const double t = s + p;
    const double z = t - s;
    const double se = (s - (t - z)) + (p - z);  // exact: s + p = t + se
    s = t;
    c += pe + se;
    abs_sum += std::fabs(p);
  }
  return sample_ref{s + c, abs_sum};
}

struct samples {
  std::vector<int64_t> i, j;
  device_array<int64_t> d_i, d_j;
  device_array<double> d_out;
  std::vector<sample_ref> ref;
};

samples make_samples(const shape& sh, const input_set& in, int count, uint64_t seed,
                     cudaStream_t stream) {
  samples s;
  std::mt19937_64 gen(seed ^ 0x5DEECE66Dull);
  std::uniform_int_distribution<int64_t> di(0, sh.m - 1), dj(0, sh.n - 1);
  for (int t = 0; t < count; ++t) {
    s.i.push_back(di(gen));
    s.j.push_back(dj(gen));
  }
  s.d_i = device_array<int64_t>(count);
  s.d_j = device_array<int64_t>(count);
  s.d_out = device_array<double>(count);
  OZDGEMM_CUDA_TRY(cudaMemcpyAsync(s.d_i.get(), s.i.data(), count * sizeof(int64_t),
                                   cudaMemcpyHostToDevice, stream));
  OZDGEMM_CUDA_TRY(cudaMemcpyAsync(s.d_j.get(), s.j.data(), count * sizeof(int64_t),
                                   cudaMemcpyHostToDevice, stream));

  const int64_t k = sh.k;
  const int64_t chunk =
      std::max<int64_t>(1, std::min<int64_t>(count, kGatherBytes / (sizeof(double) * k)));
  device_array<double> rows(chunk * k), cols(chunk * k);
  std::vector<double> h_rows(chunk * k), h_cols(chunk * k);
  for (int64_t c0 = 0; c0 < count; c0 += chunk) {
    const int64_t cnt = std::min<int64_t>(chunk, count - c0);
    gather_vectors_kernel<<<grid_for(cnt * k), 256, 0, stream>>>(in.a.get(), 1, sh.m, k,
                                                                 s.d_i.get() + c0, cnt, rows.get());
    OZDGEMM_CHECK_LAUNCH();
    gather_vectors_kernel<<<grid_for(cnt * k), 256, 0, stream>>>(in.b.get(), k, 1, k,
                                                                 s.d_j.get() + c0, cnt, cols.get());
    OZDGEMM_CHECK_LAUNCH();
    OZDGEMM_CUDA_TRY(cudaMemcpyAsync(h_rows.data(), rows.get(), cnt * k * sizeof(double),
                                     cudaMemcpyDeviceToHost, stream));
    OZDGEMM_CUDA_TRY(cudaMemcpyAsync(h_cols.data(), cols.get(), cnt * k * sizeof(double),
                                     cudaMemcpyDeviceToHost, stream));
    OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream));
    for (int64_t t = 0; t < cnt; ++t)
      s.ref.push_back(dot2(h_rows.data() + t * k, h_cols.data() + t * k, k));
  }
  return s;
}

// The sampled entries of C (ldc = m), after the stream's pending work.
std::vector<double> read_samples(const shape& sh, const double* c, samples& s,
                                 cudaStream_t stream) {
  const int64_t count = static_cast<int64_t>(s.i.size());
  gather_entries_kernel<<<grid_for(count), 256, 0, stream>>>(c, sh.m, s.d_i.get(), s.d_j.get(),
                                                             count, s.d_out.get());
  OZDGEMM_CHECK_LAUNCH();
  std::vector<double> out(count);
  OZDGEMM_CUDA_TRY(cudaMemcpyAsync(out.data(), s.d_out.get(), count * sizeof(double),
                                   cudaMemcpyDeviceToHost, stream));
  OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream));
  return out;
}

struct errors {
  double max_rel = kNaN;     // max |C - R| / |R|
  double max_scaled = kNaN;  // max |C - R| / (|A||B|)
};

// NaN anywhere (an entry the method did not write) makes the maximum NaN.
void update_max(double& m, double x) {
  if (std::isnan(m)) return;
  if (std::isnan(x) || x > m) m = x;
}

errors sampled_errors(const std::vector<double>& c, const std::vector<sample_ref>& ref) {
  errors e{0.0, 0.0};
  for (size_t t = 0; t < c.size(); ++t) {
    const double d = std::fabs(c[t] - ref[t].value);
    const double rel = ref[t].value != 0.0
                           ? d / std::fabs(ref[t].value)
                           : (d == 0.0 ? 0.0 : std::numeric_limits<double>::infinity());
    const double scaled = ref[t].abs_dot != 0.0 ? d / ref[t].abs_dot : (d == 0.0 ? 0.0 : rel);
    update_max(e.max_rel, rel);
    update_max(e.max_scaled, scaled);
  }
  return e;
}

// ---------------------------------------------------------------------------------------------
// Timing. `enqueue(copy)` enqueues one call on input set `copy` on `stream` and returns "" or
// an error message. Warm-up calls come first; the last one is timed alone to choose the rep
// count when it is adaptive. The timed calls are then enqueued back to back between events,
// with one host synchronisation at the end.

struct timing {
  double median_ms = kNaN, min_ms = kNaN;
  int reps = 0;
  std::string error;
};

template <class Enqueue>
timing time_calls(Enqueue&& enqueue, int ncopies, const bench_args& args, cudaStream_t stream,
                  const event_pool& ev) {
  timing t;
  int call = 0;
  const int warm = args.reps > 0 ? args.warmup : std::max(args.warmup, 1);
  for (int w = 0; w < warm; ++w) {
    if (w == warm - 1) OZDGEMM_CUDA_TRY(cudaEventRecord(ev[0], stream));
    t.error = enqueue(call++ % ncopies);
    if (!t.error.empty()) {
      recover(stream);
      return t;
    }
  }
  int reps = args.reps;
  if (warm > 0) {
    OZDGEMM_CUDA_TRY(cudaEventRecord(ev[1], stream));
    OZDGEMM_CUDA_TRY(cudaEventSynchronize(ev[1]));
    if (reps <= 0) {
      const double probe = elapsed_ms(ev[0], ev[1]);
      reps = probe > 0.0 ? static_cast<int>(std::ceil(kTargetMs / probe)) : kMaxReps;
      reps = std::min(std::max(reps, kMinReps), kMaxReps);
    }
  }
  reps = std::min<int>(reps, static_cast<int>(ev.size()) - 1);

  OZDGEMM_CUDA_TRY(cudaEventRecord(ev[0], stream));
  for (int r = 0; r < reps; ++r) {
    t.error = enqueue(call++ % ncopies);
    if (!t.error.empty()) {
      recover(stream);
      return t;
    }
    OZDGEMM_CUDA_TRY(cudaEventRecord(ev[r + 1], stream));
  }
  OZDGEMM_CUDA_TRY(cudaEventSynchronize(ev[reps]));
  std::vector<double> ms(reps);
  for (int r = 0; r < reps; ++r) ms[r] = elapsed_ms(ev[r], ev[r + 1]);
  t.reps = reps;
  t.median_ms = median(ms);
  t.min_ms = *std::min_element(ms.begin(), ms.end());
  return t;
}

// ---------------------------------------------------------------------------------------------
// Stage split: the internal pipeline called directly with stage events, on a private handle
// and a workspace of our own, as src/api/dgemm_api.cpp calls it.

struct stage_split {
  bool measured = false;
  double prep = kNaN, gemm = kNaN, crt = kNaN;  // ms, medians
  std::string error;
};

stage_split measure_stages(const shape& sh, const input_set& in, int s, scaling_mode mode,
                           cudaStream_t stream, cublasHandle_t private_handle) {
  namespace d = ozdgemm::detail;
  stage_split out;
  out.measured = true;
  try {
    device_array<char> ws(d::emulation_workspace_bytes(sh.m, sh.n, sh.k, s, mode));
    event_pool ev(4);
    d::stage_events se{ev[0], ev[1], ev[2], ev[3]};
    const d::gemm_problem p{sh.m,
                            sh.n,
                            sh.k,
                            d::operand_a(d::op_kind::n, in.a.get(), sh.m),
                            d::operand_b(d::op_kind::n, in.b.get(), sh.k),
                            in.c.get(),
                            sh.m};
    const d::device_gemm call{p,
                              d::scalar_arg{nullptr, 1.0},
                              d::scalar_arg{nullptr, 0.0},
                              s,
                              mode,
                              stream,
                              private_handle,
                              &se};
    std::vector<double> prep, gemm, crt;
    for (int r = 0; r <= kStageReps; ++r) {
      d::enqueue_emulation(call, ws.get());
      OZDGEMM_CUDA_TRY(cudaEventSynchronize(se.finished));
      if (r == 0) continue;  // warm-up
      prep.push_back(elapsed_ms(se.start, se.prepared));
      gemm.push_back(elapsed_ms(se.prepared, se.multiplied));
      crt.push_back(elapsed_ms(se.multiplied, se.finished));
    }
    out.prep = median(prep);
    out.gemm = median(gemm);
    out.crt = median(crt);
  } catch (const std::exception& e) {
    out.error = e.what();
    recover(stream);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Results.

struct system_info {
  std::string gpu, driver, cuda_runtime, cublas_version, date;
  size_t l2_bytes = 0;
  int sm_count = 0, cc_major = 0, cc_minor = 0;
};

struct result_row {
  shape sh{};
  std::string method;  // cublas_dgemm, cublas_emu_dynamic, cublas_emu_fixed<bits>, ozdgemm
  int moduli = 0;      // ozdgemm only
  std::string mode;    // ozdgemm only
  timing time;
  double tflops = kNaN, ratio = kNaN;
  errors err;
  bool rotated = false;
  stage_split stages;
  std::string note;
};

std::string version_string(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// The kernel driver's version from /proc (Linux); empty if unavailable.
std::string kernel_driver_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!f || !std::getline(f, line)) return "";
  const std::string key = "Kernel Module";
  const size_t pos = line.find(key);
  if (pos == std::string::npos) return "";
  std::istringstream rest(line.substr(pos + key.size()));
  std::string v;
  rest >> v;
  return v;
}

system_info query_system() {
  system_info si;
  int dev = 0;
  OZDGEMM_CUDA_TRY(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  OZDGEMM_CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
  si.gpu = prop.name;
  si.l2_bytes = static_cast<size_t>(prop.l2CacheSize);
  si.sm_count = prop.multiProcessorCount;
  si.cc_major = prop.major;
  si.cc_minor = prop.minor;
  int drv = 0, rt = 0;
  OZDGEMM_CUDA_TRY(cudaDriverGetVersion(&drv));
  OZDGEMM_CUDA_TRY(cudaRuntimeGetVersion(&rt));
  const std::string kmod = kernel_driver_version();
  si.driver = (kmod.empty() ? "" : kmod + " ") + "(cuda " + version_string(drv) + ")";
  si.cuda_runtime = version_string(rt);
  int major = 0, minor = 0, patch = 0;
  OZDGEMM_CUBLAS_TRY(cublasGetProperty(MAJOR_VERSION, &major));
  OZDGEMM_CUBLAS_TRY(cublasGetProperty(MINOR_VERSION, &minor));
  OZDGEMM_CUBLAS_TRY(cublasGetProperty(PATCH_LEVEL, &patch));
  si.cublas_version =
      std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  char buf[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  si.date = buf;
  return si;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string num(double x) {
  if (std::isnan(x)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

class csv_writer {
 public:
  csv_writer(const std::string& path, const system_info& si) : f_(path), si_(si) {
    if (!f_) throw std::runtime_error("cannot open --csv file '" + path + "' for writing");
    f_ << "gpu,driver,cuda_runtime,cublas_version,date,shape_m,shape_n,shape_k,method,moduli,"
          "mode,median_ms,min_ms,tflops,ratio_vs_native,max_rel_err,max_scaled_err,rotated,"
          "stage_prep_ms,stage_gemm_ms,stage_crt_ms\n";
    f_.flush();
  }
  void write(const result_row& r) {
    const bool st = r.stages.measured;
    f_ << csv_field(si_.gpu) << ',' << csv_field(si_.driver) << ',' << si_.cuda_runtime << ','
       << si_.cublas_version << ',' << si_.date << ',' << r.sh.m << ',' << r.sh.n << ',' << r.sh.k
       << ',' << r.method << ',' << (r.moduli > 0 ? std::to_string(r.moduli) : "") << ',' << r.mode
       << ',' << num(r.time.median_ms) << ',' << num(r.time.min_ms) << ',' << num(r.tflops) << ','
       << num(r.ratio) << ',' << num(r.err.max_rel) << ',' << num(r.err.max_scaled) << ','
       << (r.rotated ? 1 : 0) << ',' << (st ? num(r.stages.prep) : "") << ','
       << (st ? num(r.stages.gemm) : "") << ',' << (st ? num(r.stages.crt) : "") << '\n';
    f_.flush();  // partial results survive an interrupted sweep
    if (!f_) throw std::runtime_error("write to the --csv file failed");
  }

 private:
  std::ofstream f_;
  const system_info& si_;
};

std::string label(const result_row& r) {
  if (r.method != "ozdgemm") return r.method;
  return "ozdgemm s=" + std::to_string(r.moduli) + " " + r.mode;
}

void print_table(const shape& sh, const std::vector<result_row>& rows, const std::string& rot,
                 int nsamples, bool stages) {
  std::printf(
      "\n== C = A B, m=%lld n=%lld k=%lld; %s; errors sampled at %d (i,j) vs double-double\n",
      static_cast<long long>(sh.m), static_cast<long long>(sh.n), static_cast<long long>(sh.k),
      rot.c_str(), nsamples);
  std::printf("%-26s %10s %10s %8s %7s %10s %10s %4s", "method", "median ms", "min ms", "TFLOPS",
              "x nat", "max rel", "max scaled", "reps");
  if (stages) std::printf(" %9s %9s %9s", "prep ms", "gemm ms", "crt ms");
  std::printf("\n");
  for (const auto& r : rows) {
    std::printf("%-26s %10.3f %10.3f %8.2f %7.2f %10.2e %10.2e %4d", label(r).c_str(),
                r.time.median_ms, r.time.min_ms, r.tflops, r.ratio, r.err.max_rel, r.err.max_scaled,
                r.time.reps);
    if (stages) {
      if (r.stages.measured) {
        std::printf(" %9.3f %9.3f %9.3f", r.stages.prep, r.stages.gemm, r.stages.crt);
      } else {
        std::printf(" %9s %9s %9s", "-", "-", "-");
      }
    }
    if (!r.note.empty()) std::printf("  [%s]", r.note.c_str());
    std::printf("\n");
  }
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// The methods.

struct method {
  std::string name;
  int moduli = 0;
  scaling_mode mode = scaling_mode::accurate;
  cublasHandle_t handle = nullptr;  // cuBLAS methods: the configured handle
};

// A handle in cuBLAS's FP64 fixed-point emulation. Any failing setter disables the method.
// Returns "" or why it cannot be used.
std::string configure_cublas_emulation(cublasHandle_t h, bool fixed, int bits) {
  auto check = [](cublasStatus_t st, const char* what) -> std::string {
    return st == CUBLAS_STATUS_SUCCESS ? "" : std::string(what) + ": " + cublasGetStatusString(st);
  };
  std::string e = check(cublasSetMathMode(h, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH),
                        "cublasSetMathMode(CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH)");
  if (e.empty())
    e = check(cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_EAGER),
              "cublasSetEmulationStrategy(EAGER)");
  if (e.empty())
    e = check(cublasSetFixedPointEmulationMantissaControl(
                  h, fixed ? CUDA_EMULATION_MANTISSA_CONTROL_FIXED
                           : CUDA_EMULATION_MANTISSA_CONTROL_DYNAMIC),
              fixed ? "cublasSetFixedPointEmulationMantissaControl(FIXED)"
                    : "cublasSetFixedPointEmulationMantissaControl(DYNAMIC)");
  if (e.empty() && fixed)
    e = check(cublasSetFixedPointEmulationMaxMantissaBitCount(h, bits),
              "cublasSetFixedPointEmulationMaxMantissaBitCount");
  return e;
}

struct bench_context {
  const bench_args& args;
  const system_info& si;
  cudaStream_t stream;
  const event_pool& events;
  cublasHandle_t native;         // default math mode; also the caller handle for ozdgemm
  cublasHandle_t stage_private;  // private INT8 handle for the instrumented runs
  std::vector<method> methods;
  csv_writer* csv;
};

// Number of input sets to rotate through: one unless a set is small enough to stay in L2.
// With n sets, a set is reused only after n - 1 others (>= 3 L2 of data) were streamed.
int copies_for(const shape& sh, size_t l2_bytes) {
  const double set_bytes =
      8.0 * (static_cast<double>(sh.m) * sh.k + static_cast<double>(sh.k) * sh.n +
             static_cast<double>(sh.m) * sh.n);
  const double hot = 3.0 * static_cast<double>(l2_bytes);
  if (set_bytes > hot) return 1;
  return std::min(kMaxCopies, static_cast<int>(std::ceil(hot / set_bytes)) + 1);
}

// Returns false if the shape failed as a whole (inputs could not be made).
bool run_shape(const shape& sh, bench_context& cx) {
  const bench_args& args = cx.args;
  const cudaStream_t stream = cx.stream;
  const double flops = 2.0 * static_cast<double>(sh.m) * sh.n * sh.k;
  const int m = static_cast<int>(sh.m), n = static_cast<int>(sh.n), k = static_cast<int>(sh.k);
  const double set_mb =
      8.0 * (double(sh.m) * sh.k + double(sh.k) * sh.n + double(sh.m) * sh.n) / 1e6;

  int ncopies = copies_for(sh, cx.si.l2_bytes);
  std::vector<input_set> sets;
  try {
    for (int c = 0; c < ncopies; ++c) {
      input_set in{device_array<double>(sh.m * sh.k), device_array<double>(sh.k * sh.n),
                   device_array<double>(sh.m * sh.n)};
      fill_random(in.a.get(), sh.m * sh.k, matrix_key(args.seed, c, 0), args.phi, stream);
      fill_random(in.b.get(), sh.k * sh.n, matrix_key(args.seed, c, 1), args.phi, stream);
      OZDGEMM_CUDA_TRY(cudaMemsetAsync(in.c.get(), 0, sh.m * sh.n * sizeof(double), stream));
      sets.push_back(std::move(in));
    }
    OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream));
  } catch (const ozdgemm::cuda_error& e) {
    if (e.code != cudaErrorMemoryAllocation || sets.empty()) throw;
    // Fewer copies than wanted still rotate; say how many.
    recover(stream);
    std::fprintf(stderr, "ozdgemm_bench: only %zu input copies fit in memory\n", sets.size());
    ncopies = static_cast<int>(sets.size());
  }
  const bool rotated = ncopies > 1;
  char rot[160];
  if (rotated) {
    std::snprintf(rot, sizeof rot,
                  "inputs rotated over %d copies (one set %.1f MB, 3 x L2 %.1f MB)", ncopies,
                  set_mb, 3.0 * cx.si.l2_bytes / 1e6);
  } else {
    std::snprintf(rot, sizeof rot, "no input rotation (one set %.1f MB > 3 x L2 %.1f MB)", set_mb,
                  3.0 * cx.si.l2_bytes / 1e6);
  }
  std::fprintf(stderr, "[%dx%dx%d] %s; computing the sampled reference...\n", m, n, k, rot);

  samples smp = make_samples(sh, sets[0], args.samples, args.seed, stream);

  const double one = 1.0, zero = 0.0;
  std::vector<result_row> rows;
  std::vector<double> native_samples;
  double native_ms = kNaN;

  for (const method& me : cx.methods) {
    result_row row;
    row.sh = sh;
    row.method = me.name;
    row.rotated = rotated;
    const bool is_oz = me.name == "ozdgemm";
    if (is_oz) {
      row.moduli = me.moduli;
      row.mode = mode_name(me.mode);
    }
    ozdgemm::options opts;
    opts.num_moduli = me.moduli;
    opts.scaling =
        me.mode == scaling_mode::fast ? ozdgemm::scaling::fast : ozdgemm::scaling::accurate;

    auto enqueue = [&](int copy) -> std::string {
      const input_set& in = sets[copy];
      if (is_oz) {
        const ozdgemm::status st =
            ozdgemm::dgemm(cx.native, CUBLAS_OP_N, CUBLAS_OP_N, sh.m, sh.n, sh.k, &one, in.a.get(),
                           sh.m, in.b.get(), sh.k, &zero, in.c.get(), sh.m, opts);
        return st == OZDGEMM_STATUS_SUCCESS
                   ? ""
                   : std::string("ozdgemm::dgemm: ") + ozdgemm::to_string(st);
      }
      const cublasStatus_t st = cublasDgemm(me.handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one,
                                            in.a.get(), m, in.b.get(), k, &zero, in.c.get(), m);
      return st == CUBLAS_STATUS_SUCCESS ? ""
                                         : std::string("cublasDgemm: ") + cublasGetStatusString(st);
    };

    std::fprintf(stderr, "[%dx%dx%d] %s ...", m, n, k, label(row).c_str());
    std::fflush(stderr);
    try {
      row.time = time_calls(enqueue, ncopies, args, stream, cx.events);
      if (row.time.error.empty()) {
        // Accuracy on input set 0, into a C filled with NaN (all bits set): an entry the
        // method does not write shows up as a NaN error rather than a stale value.
        OZDGEMM_CUDA_TRY(
            cudaMemsetAsync(sets[0].c.get(), 0xFF, sh.m * sh.n * sizeof(double), stream));
        const std::string err = enqueue(0);
        if (err.empty()) {
          const std::vector<double> got = read_samples(sh, sets[0].c.get(), smp, stream);
          row.err = sampled_errors(got, smp.ref);
          if (me.name == "cublas_dgemm") {
            native_samples = got;
          } else if (!is_oz && !native_samples.empty() && got == native_samples) {
            row.note = "bit-identical to native on all samples: emulation probably not used";
          }
        } else {
          row.time.error = err;
          recover(stream);
        }
      }
    } catch (const std::exception& e) {
      // An asynchronous failure surfacing at a synchronisation: keep the row, go on (a sticky
      // error will fail the following methods the same way, each with its row).
      row.time.error = e.what();
      recover(stream);
    }
    if (!row.time.error.empty()) {
      row.time.median_ms = row.time.min_ms = kNaN;
      row.note = row.time.error;
      std::fprintf(stderr, " FAILED: %s\n", row.time.error.c_str());
    } else {
      std::fprintf(stderr, " median %.3f ms, min %.3f ms over %d reps, max rel err %.2e\n",
                   row.time.median_ms, row.time.min_ms, row.time.reps, row.err.max_rel);
    }
    row.tflops = flops / (row.time.median_ms * 1e-3) / 1e12;
    if (me.name == "cublas_dgemm") native_ms = row.time.median_ms;
    row.ratio = native_ms / row.time.median_ms;

    if (is_oz) {
      // Free the library's cached workspace before the instrumented run makes its own.
      // The pool behind its cudaFreeAsync returns memory to the device at a synchronisation.
      ozdgemm_release_handle(cx.native);
      recover(stream);
      if (args.stages) {
        std::fprintf(stderr, "[%dx%dx%d] %s stage split ...", m, n, k, label(row).c_str());
        std::fflush(stderr);
        row.stages = measure_stages(sh, sets[0], me.moduli, me.mode, stream, cx.stage_private);
        if (row.stages.error.empty()) {
          std::fprintf(stderr, " prep %.3f ms, gemm %.3f ms, crt %.3f ms\n", row.stages.prep,
                       row.stages.gemm, row.stages.crt);
        } else {
          std::fprintf(stderr, " FAILED: %s\n", row.stages.error.c_str());
          if (!row.note.empty()) row.note += "; ";
          row.note += "stages failed: " + row.stages.error;
        }
      }
    }
    rows.push_back(row);
  }

  print_table(sh, rows, rot, args.samples, args.stages);
  if (cx.csv != nullptr)
    for (const auto& r : rows) cx.csv->write(r);
  return true;
}

int run(const bench_args& args) {
  int ndev = 0;
  const cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "ozdgemm_bench: no CUDA device (%s); nothing to measure\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return EXIT_FAILURE;
  }
  const system_info si = query_system();
  std::printf(
      "ozdgemm_bench: %s (sm_%d%d, %d SMs, L2 %.1f MB), driver %s, CUDA runtime %s, "
      "cuBLAS %s, %s\n",
      si.gpu.c_str(), si.cc_major, si.cc_minor, si.sm_count, si.l2_bytes / 1e6, si.driver.c_str(),
      si.cuda_runtime.c_str(), si.cublas_version.c_str(), si.date.c_str());
  std::printf(
      "inputs: (U-0.5)*exp(%.3g*N(0,1)), seed %llu, column-major, alpha=1 beta=0; "
      "time = CUDA events on one stream, %s reps after %d warm-up; "
      "errors are SAMPLED at %d random (i,j) against a double-double reference\n",
      args.phi, static_cast<unsigned long long>(args.seed),
      args.reps > 0 ? std::to_string(args.reps).c_str() : "adaptive (5..50, ~1 s)", args.warmup,
      args.samples);

  // Declaration order is teardown order in reverse: handles go before the stream they use.
  cuda_stream stream;
  event_pool events(static_cast<size_t>(std::max(args.reps, kMaxReps)) + 1);
  cublas_handle native(stream.get());
  cublas_handle stage_private(stream.get());
  cublas_handle emu_dynamic(stream.get());
  cublas_handle emu_fixed(stream.get());

  std::unique_ptr<csv_writer> csv;
  if (!args.csv.empty()) csv = std::make_unique<csv_writer>(args.csv, si);

  bench_context cx{args, si,       stream.get(), events, native.get(), stage_private.get(),
                   {},   csv.get()};
  cx.methods.push_back(method{"cublas_dgemm", 0, scaling_mode::accurate, native.get()});
  if (args.cublas_emu) {
    const std::string dyn = configure_cublas_emulation(emu_dynamic.get(), false, 0);
    if (dyn.empty()) {
      cx.methods.push_back(
          method{"cublas_emu_dynamic", 0, scaling_mode::accurate, emu_dynamic.get()});
    } else {
      std::printf("skipping cublas_emu_dynamic: %s\n", dyn.c_str());
    }
    const std::string fix = configure_cublas_emulation(emu_fixed.get(), true, args.emu_bits);
    if (fix.empty()) {
      cx.methods.push_back(method{"cublas_emu_fixed" + std::to_string(args.emu_bits), 0,
                                  scaling_mode::accurate, emu_fixed.get()});
    } else {
      std::printf("skipping cublas_emu_fixed%d: %s\n", args.emu_bits, fix.c_str());
    }
  }
  for (scaling_mode mode : args.modes)
    for (int s : args.moduli) cx.methods.push_back(method{"ozdgemm", s, mode, nullptr});

  int failed = 0;
  for (const shape& sh : args.shapes) {
    try {
      run_shape(sh, cx);
    } catch (const std::exception& ex) {
      ++failed;
      std::fprintf(stderr, "\nozdgemm_bench: shape %lldx%lldx%lld failed: %s\n",
                   static_cast<long long>(sh.m), static_cast<long long>(sh.n),
                   static_cast<long long>(sh.k), ex.what());
      std::printf("\n== m=%lld n=%lld k=%lld: FAILED (%s)\n", static_cast<long long>(sh.m),
                  static_cast<long long>(sh.n), static_cast<long long>(sh.k), ex.what());
      recover(stream.get());
    }
  }
  OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  if (failed > 0) std::fprintf(stderr, "ozdgemm_bench: %d shape(s) failed\n", failed);
  return failed > 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  const bench_args args = parse_args(argc, argv);
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ozdgemm_bench: fatal: %s\n", e.what());
    return EXIT_FAILURE;
  }
}
