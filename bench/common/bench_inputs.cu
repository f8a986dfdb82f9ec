#include "bench_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace ozdgemm::bench {
namespace {

constexpr size_t kGatherBytes = size_t{64} << 20;  // bound on the reference's staging buffers

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

// Element i uses splitmix64 of key + 3 i + {0, 1, 2}.
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

// NaN stays NaN: an entry that was not written poisons the maximum instead of hiding.
void update_max(double& m, double x) {
  if (std::isnan(m)) return;
  if (std::isnan(x) || x > m) m = x;
}

}  // namespace

input_set make_input_set(const shape& sh, uint64_t seed, int copy, double phi,
                         cudaStream_t stream) {
  input_set in{device_array<double>(sh.m * sh.k), device_array<double>(sh.k * sh.n),
               device_array<double>(sh.m * sh.n)};
  fill_random(in.a.get(), sh.m * sh.k, matrix_key(seed, copy, 0), phi, stream);
  fill_random(in.b.get(), sh.k * sh.n, matrix_key(seed, copy, 1), phi, stream);
  OZDGEMM_CUDA_TRY(cudaMemsetAsync(in.c.get(), 0, sh.m * sh.n * sizeof(double), stream));
  return in;
}

int copies_for(const shape& sh, size_t l2_bytes, int max_copies) {
  const double hot = 3.0 * static_cast<double>(l2_bytes);
  if (set_bytes(sh) > hot) return 1;
  return std::min(max_copies, static_cast<int>(std::ceil(hot / set_bytes(sh))) + 1);
}

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

}  // namespace ozdgemm::bench
