#include "core/auto_ratio.hpp"
#include "core/certified_bound.hpp"
#include "core/element.hpp"
#include "core/scaling_rules.hpp"
#include "launch_common.cuh"
#include "planes.cuh"
#include "scaling.cuh"
#include "scan.cuh"

namespace ozdgemm::detail {
namespace {

struct exponent_op {
  struct acc_t {
    int emax;
    uint32_t flags;
  };
  int* emax_enc;
  uint32_t* flags;
  __device__ acc_t init() const { return {kZeroExponent, 0}; }
  __device__ void add(acc_t& a, double x, int64_t) const {
    const int e = exponent_of(x);
    a.emax = e > a.emax ? e : a.emax;
    a.flags |= nonfinite_flag(x);
  }
  __device__ void merge(acc_t& a, const acc_t& b) const {
    a.emax = b.emax > a.emax ? b.emax : a.emax;
    a.flags |= b.flags;
  }
  __device__ void commit(int64_t v, const acc_t& a) const {
    if (a.emax != kZeroExponent) atomicMax(emax_enc + v, a.emax + kExponentBias);
    if (a.flags != 0) atomicOr(flags + v, a.flags);
  }
};

struct norm_op {
  using acc_t = unsigned long long;
  const int* emax_enc;
  unsigned long long* sum_q2;
  __device__ acc_t init() const { return 0; }
  __device__ void add(acc_t& a, double x, int64_t v) const {
    a += norm_square_term(x, decode_emax(emax_enc[v]));
  }
  __device__ void merge(acc_t& a, const acc_t& b) const { a += b; }
  __device__ void commit(int64_t v, const acc_t& a) const {
    if (a != 0) atomicAdd(sum_q2 + v, a);
  }
};

__global__ void fast_exponent_kernel(int64_t nvec, const int* emax_enc,
                                     const unsigned long long* sum_q2, modulus_table tb, int* exps) {
  const int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v < nvec) exps[v] = fast_exponent(decode_emax(emax_enc[v]), sum_q2[v], tb);
}

struct bound_gen {
  using vec = int;  // emax of the vector
  using state = int8_t;
  const int* emax_enc;
  __device__ vec vector(int64_t v) const { return decode_emax(emax_enc[v]); }
  __device__ void skip_vectors(int64_t n) { emax_enc += n; }
  __device__ state prepare(double x, int e) const {
    return e == kZeroExponent ? 0 : bound_quantize(x, e);
  }
  __device__ bool narrow(const state&) const { return false; }  // one path
  // One plane: only First = true runs.
  template <bool, bool>
  __device__ void pack(const state (&st)[kPlaneRun], int, uint32_t (&w)[2]) const {
#pragma unroll
    for (int j = 0; j < 2; ++j)
      w[j] = pack4(static_cast<uint8_t>(st[4 * j]), static_cast<uint8_t>(st[4 * j + 1]),
                   static_cast<uint8_t>(st[4 * j + 2]), static_cast<uint8_t>(st[4 * j + 3]));
  }
};

// max_i U_ij (summed over the k-blocks) of column j, computed by the whole block; the result
// is valid in thread 0 only. Every thread of the block must call it (it synchronises), and
// the caller must synchronise before calling it again (warp_best is reused).
__device__ long long block_column_max(const int32_t* u, int64_t nblk, int64_t m, int64_t j,
                                      int64_t m_pad, int64_t n_pad) {
  long long best = 0;
  for (int64_t i = threadIdx.x; i < m; i += blockDim.x) {
    long long sum = 0;
    for (int64_t b = 0; b < nblk; ++b) sum += u[(b * n_pad + j) * m_pad + i];
    best = sum > best ? sum : best;
  }
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) {
    const long long o = __shfl_xor_sync(0xFFFFFFFFu, best, mask);
    best = o > best ? o : best;
  }
  __shared__ long long warp_best[32];
  if (threadIdx.x % 32 == 0) warp_best[threadIdx.x / 32] = best;
  __syncthreads();
  if (threadIdx.x == 0)
    for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w)
      best = warp_best[w] > best ? warp_best[w] : best;
  return best;
}

// One block per column j: the column headroom and exponent of B from max_i U_ij. In this and the
// next two kernels blockIdx.z is the matrix of a batch (accurate_exponent_args::batch).
__global__ void column_headroom_kernel(const int32_t* u, int64_t nblk, int64_t m, int64_t n,
                                       int64_t m_pad, int64_t n_pad, const int* emax_b_enc,
                                       modulus_table tb, int* head_b, int* exp_b) {
  const int64_t z = blockIdx.z;
  u += z * nblk * n_pad * m_pad;
  emax_b_enc += z * n;
  head_b += z * n;
  exp_b += z * n;
  for (int64_t j = blockIdx.x; j < n; j += gridDim.x) {
    const long long best = block_column_max(u, nblk, m, j, m_pad, n_pad);
    if (threadIdx.x == 0) {
      const int h = accurate_column_headroom(static_cast<double>(best), tb);
      head_b[j] = h;
      exp_b[j] = accurate_exponent(h, decode_emax(emax_b_enc[j]));
    }
    __syncthreads();
  }
}

constexpr int kRowChunk = 256;  // columns per block in the row pass

// Threads along i (coalesced); each block covers kRowChunk columns, then an atomicMax on the
// bits of a non-negative double, which orders like the value.
__global__ void row_max_kernel(const int32_t* u, int64_t nblk, int64_t m, int64_t n,
                               int64_t m_pad, int64_t n_pad, const int* head_b,
                               unsigned long long* row_max_bits) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const int64_t z = blockIdx.z;
  u += z * nblk * n_pad * m_pad;
  head_b += z * n;
  row_max_bits += z * m;
  const int64_t j0 = static_cast<int64_t>(blockIdx.y) * kRowChunk;
  const int64_t j1 = j0 + kRowChunk < n ? j0 + kRowChunk : n;
  double best = 0.0;
  for (int64_t j = j0; j < j1; ++j) {
    long long sum = 0;
    for (int64_t b = 0; b < nblk; ++b) sum += u[(b * n_pad + j) * m_pad + i];
    const double v = scale_pow2(static_cast<double>(sum), head_b[j]);
    best = v > best ? v : best;
  }
  if (best > 0.0) atomicMax(row_max_bits + i, static_cast<unsigned long long>(double_bits(best)));
}

__global__ void row_exponent_kernel(int64_t m, const unsigned long long* row_max_bits,
                                    const int* emax_a_enc, modulus_table tb, int* exp_a) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const int64_t z = blockIdx.z;
  row_max_bits += z * m;
  emax_a_enc += z * m;
  exp_a += z * m;
  const double row_max = bits_double(row_max_bits[i]);
  exp_a[i] = accurate_exponent(accurate_row_headroom(row_max, tb), decode_emax(emax_a_enc[i]));
}

// ---- Automatic moduli count ----------------------------------------------------------------

// exponent_op plus the exponent sum and nonzero count (auto only: the fixed-s path keeps the
// lighter exponent_op).
struct exponent_stats_op {
  struct acc_t {
    int emax;
    uint32_t flags;
    long long exp_sum;
    unsigned int nnz;
    unsigned int pad;
  };
  int* emax_enc;
  uint32_t* flags;
  unsigned long long* exp_sum;
  unsigned int* nnz;
  __device__ acc_t init() const { return {kZeroExponent, 0, 0, 0, 0}; }
  __device__ void add(acc_t& a, double x, int64_t) const {
    const int e = exponent_of(x);
    a.emax = e > a.emax ? e : a.emax;
    a.flags |= nonfinite_flag(x);
    if (e != kZeroExponent) {
      a.exp_sum += e;
      ++a.nnz;
    }
  }
  __device__ void merge(acc_t& a, const acc_t& b) const {
    a.emax = b.emax > a.emax ? b.emax : a.emax;
    a.flags |= b.flags;
    a.exp_sum += b.exp_sum;
    a.nnz += b.nnz;
  }
  __device__ void commit(int64_t v, const acc_t& a) const {
    if (a.emax != kZeroExponent) atomicMax(emax_enc + v, a.emax + kExponentBias);
    if (a.flags != 0) atomicOr(flags + v, a.flags);
    // Two's complement: an unsigned add accumulates signed sums exactly.
    if (a.nnz != 0) {
      atomicAdd(exp_sum + v, static_cast<unsigned long long>(a.exp_sum));
      atomicAdd(nnz + v, a.nnz);
    }
  }
};

constexpr int kAutoSpan = kMaxModuli - kMinModuli + 1;  // candidate s values

// r_v for exponent e, 0 for a vector the model ignores (zero, non-finite: recomputed in FP64).
__device__ __forceinline__ double vector_ratio(int64_t k, int emax, uint32_t flags,
                                               unsigned int nnz, unsigned long long exp_sum,
                                               int e) {
  if (emax == kZeroExponent || flags != 0 || nnz == 0) return 0.0;
  return truncation_ratio(k, nnz, static_cast<long long>(exp_sum), e);
}

// One thread per vector and s (blockIdx.y = s - kMinModuli): the exponent search of one s is a
// short loop, and with every s in one thread a 4096-vector operand ran 16 blocks of 19 searches
// in a row (24 us on the H100, against 3 for one s).
__global__ void fast_ratio_kernel(int64_t nvec, int64_t k, const int* emax_enc,
                                  const uint32_t* flags, const unsigned long long* sum_q2,
                                  const unsigned long long* exp_sum, const unsigned int* nnz,
                                  auto_bounds b, unsigned long long* worst, int* exps_all,
                                  int* drop) {
  const int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int s = kMinModuli + static_cast<int>(blockIdx.y);
  const bool in = v < nvec;
  const int emax = in ? decode_emax(emax_enc[v]) : kZeroExponent;
  const int e = fast_exponent(emax, in ? sum_q2[v] : 0, b.bound[s]);
  if (in && exps_all != nullptr) exps_all[(s - kMinModuli) * nvec + v] = e;
  if (in && drop != nullptr && blockIdx.y == 0)
    drop[v] = band_drop(emax, static_cast<long long>(exp_sum[v]), nnz[v]);
  const double r = in ? vector_ratio(k, emax, flags[v], nnz[v], exp_sum[v], e) : 0.0;
  warp_max_commit(r, worst + s);
}

// One block per column j: max_i of U_ij (summed over the k-blocks), kept for every s.
__global__ void column_max_kernel(const int32_t* u, int64_t nblk, int64_t m, int64_t n,
                                  int64_t m_pad, int64_t n_pad, long long* col_max) {
  for (int64_t j = blockIdx.x; j < n; j += gridDim.x) {
    const long long best = block_column_max(u, nblk, m, j, m_pad, n_pad);
    if (threadIdx.x == 0) col_max[j] = best;
    __syncthreads();
  }
}

// Per column j and every s: hB_j(s) (kept for the row pass) and c_j(s).
__global__ void column_ratio_kernel(int64_t n, int64_t k, const long long* col_max,
                                    auto_vector_stats st, auto_bounds b, int* head_all,
                                    unsigned long long* worst, int* exps_all) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool in = j < n;
  const double cm = in ? static_cast<double>(col_max[j]) : 0.0;
  const int emax = in ? decode_emax(st.emax_enc[j]) : kZeroExponent;
  const uint32_t fl = in ? st.flags[j] : 0;
  const unsigned long long es = in ? st.exp_sum[j] : 0;
  const unsigned int nz = in ? st.nnz[j] : 0;
  for (int s = kMinModuli; s <= kMaxModuli; ++s) {
    const int h = accurate_column_headroom(cm, b.bound_accurate[s]);
    const int e = accurate_exponent(h, emax);
    if (in) head_all[(s - kMinModuli) * n + j] = h;
    if (in && exps_all != nullptr) exps_all[(s - kMinModuli) * n + j] = e;
    warp_max_commit(vector_ratio(k, emax, fl, nz, es, e), worst + s);
  }
}

// Row maxima of 2^hB_j(s) U_ij for every s, in one pass over U. U_ij is an integer below 2^53
// and every hB_j(s) lies in [-10, 78] (U_ij < 127^2 2^31 against bound_accurate >= 2^29 at
// s = 2, and the cap of 78), so 2^h U_ij is a normal double and
// its bit pattern is U_ij's plus h << 52: exactly scale_pow2 (what row_max_kernel and the host
// reference compute), at the cost of an integer add. Zero entries stay out of the maximum.
__global__ void __launch_bounds__(256) row_max_all_kernel(const int32_t* u, int64_t nblk, int64_t m,
                                                          int64_t n, int64_t m_pad, int64_t n_pad,
                                                          const int* head_all,
                                                          unsigned long long* row_max_all) {
  __shared__ int head[kAutoSpan][kRowChunk];
  const int64_t j0 = static_cast<int64_t>(blockIdx.y) * kRowChunk;
  const int64_t j1 = j0 + kRowChunk < n ? j0 + kRowChunk : n;
  for (int idx = threadIdx.x; idx < kAutoSpan * kRowChunk; idx += blockDim.x) {
    const int t = idx / kRowChunk, jj = idx % kRowChunk;
    head[t][jj] = j0 + jj < j1 ? head_all[t * n + j0 + jj] : 0;
  }
  __syncthreads();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= m) return;
  unsigned long long best[kAutoSpan];
#pragma unroll
  for (int t = 0; t < kAutoSpan; ++t) best[t] = 0;
  for (int64_t j = j0; j < j1; ++j) {
    long long sum = 0;
    for (int64_t blk = 0; blk < nblk; ++blk) sum += u[(blk * n_pad + j) * m_pad + i];
    if (sum == 0) continue;
    const unsigned long long bits = double_bits(static_cast<double>(sum));
#pragma unroll
    for (int t = 0; t < kAutoSpan; ++t) {
      const unsigned long long c =
          bits + (static_cast<unsigned long long>(static_cast<long long>(head[t][j - j0])) << 52);
      best[t] = c > best[t] ? c : best[t];
    }
  }
#pragma unroll
  for (int t = 0; t < kAutoSpan; ++t)
    if (best[t] != 0) atomicMax(row_max_all + t * m + i, best[t]);
}

// Per row i and every s: hA_i(s) from the row maximum, then r_i(s).
__global__ void row_ratio_kernel(int64_t m, int64_t k, const unsigned long long* row_max_all,
                                 auto_vector_stats st, auto_bounds b, unsigned long long* worst,
                                 int* exps_all) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool in = i < m;
  const int emax = in ? decode_emax(st.emax_enc[i]) : kZeroExponent;
  const uint32_t fl = in ? st.flags[i] : 0;
  const unsigned long long es = in ? st.exp_sum[i] : 0;
  const unsigned int nz = in ? st.nnz[i] : 0;
  for (int s = kMinModuli; s <= kMaxModuli; ++s) {
    const double rm = in ? bits_double(row_max_all[(s - kMinModuli) * m + i]) : 0.0;
    const int h = accurate_row_headroom(rm, b.bound_accurate[s]);
    const int e = accurate_exponent(h, emax);
    if (in && exps_all != nullptr) exps_all[(s - kMinModuli) * m + i] = e;
    warp_max_commit(vector_ratio(k, emax, fl, nz, es, e), worst + s);
  }
}

__global__ void mirror_halves_kernel(int64_t half, int* emax_enc, uint32_t* flags,
                                     unsigned long long* sum_q2, unsigned long long* exp_sum,
                                     unsigned int* nnz, unsigned long long* norm1) {
  const int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= half) return;
  emax_enc[half + v] = emax_enc[v];
  flags[half + v] = flags[v];
  if (sum_q2 != nullptr) sum_q2[half + v] = sum_q2[v];
  if (exp_sum != nullptr) exp_sum[half + v] = exp_sum[v];
  if (nnz != nullptr) nnz[half + v] = nnz[v];
  if (norm1 != nullptr) norm1[half + v] = norm1[v];
}

}  // namespace

void launch_mirror_halves(int64_t half, int* emax_enc, uint32_t* flags, unsigned long long* sum_q2,
                          unsigned long long* exp_sum, unsigned int* nnz, unsigned long long* norm1,
                          cudaStream_t stream) {
  mirror_halves_kernel<<<grid_dim(half, 256), 256, 0, stream>>>(half, emax_enc, flags, sum_q2,
                                                                exp_sum, nnz, norm1);
}

void launch_vector_scan(const operand_vectors& v, int* emax_enc, uint32_t* flags,
                        cudaStream_t stream) {
  launch_scan(v.x, v.nvec, v.k, v.alpha_dev, exponent_op{emax_enc, flags}, stream, v.batch,
              v.batch_stride);
}

void launch_norm_scan(const operand_vectors& v, const int* emax_enc, unsigned long long* sum_q2,
                      cudaStream_t stream) {
  launch_scan(v.x, v.nvec, v.k, v.alpha_dev, norm_op{emax_enc, sum_q2}, stream, v.batch,
              v.batch_stride);
}

void launch_fast_exponents(int64_t nvec, const int* emax_enc, const unsigned long long* sum_q2,
                           const modulus_table& tb, int* exps, cudaStream_t stream) {
  fast_exponent_kernel<<<grid_dim(nvec, 256), 256, 0, stream>>>(nvec, emax_enc, sum_q2, tb, exps);
}

void launch_bound_quantize(const operand_vectors& v, const int* emax_enc, int8_t* plane,
                           cudaStream_t stream) {
  if (v.batch > 1)
    launch_plane_tiles<true>(v.x, v.nvec, v.nvec_pad, v.k, v.k_pad, v.alpha_dev,
                             bound_gen{emax_enc}, 1, plane, stream, nullptr, 0, v.batch,
                             v.batch_stride);
  else
    launch_plane_tiles(v.x, v.nvec, v.nvec_pad, v.k, v.k_pad, v.alpha_dev, bound_gen{emax_enc}, 1,
                       plane, stream);
}

void launch_accurate_exponents(const accurate_exponent_args& a, const modulus_table& tb,
                               cudaStream_t stream) {
  const unsigned z = static_cast<unsigned>(a.batch);
  column_headroom_kernel<<<dim3(grid_dim(a.n, 1, 65535), 1, z), 256, 0, stream>>>(
      a.u, a.nblk, a.m, a.n, a.m_pad, a.n_pad, a.emax_b_enc, tb, a.head_b, a.exp_b);
  row_max_kernel<<<dim3(grid_dim(a.m, 256), grid_dim(a.n, kRowChunk, 65535), z), 256, 0, stream>>>(
      a.u, a.nblk, a.m, a.n, a.m_pad, a.n_pad, a.head_b, a.row_max_bits);
  row_exponent_kernel<<<dim3(grid_dim(a.m, 256), 1, z), 256, 0, stream>>>(
      a.m, a.row_max_bits, a.emax_a_enc, tb, a.exp_a);
}

auto_bounds make_auto_bounds() {
  auto_bounds b{};
  for (int s = kMinModuli; s <= kMaxModuli; ++s) {
    b.bound[s] = moduli_for(s).bound;
    b.bound_accurate[s] = moduli_for(s).bound_accurate;
  }
  return b;
}

void launch_vector_scan_stats(const operand_vectors& v, int* emax_enc, uint32_t* flags,
                              unsigned long long* exp_sum, unsigned int* nnz, cudaStream_t stream) {
  launch_scan(v.x, v.nvec, v.k, v.alpha_dev, exponent_stats_op{emax_enc, flags, exp_sum, nnz},
              stream);
}

void launch_fast_ratios(const fast_ratio_args& a, const auto_bounds& b, cudaStream_t stream) {
  fast_ratio_kernel<<<dim3(grid_dim(a.nvec, 256), kAutoSpan), 256, 0, stream>>>(
      a.nvec, a.k, a.emax_enc, a.flags, a.sum_q2, a.exp_sum, a.nnz, b, a.worst, a.exps_all, a.drop);
}

void launch_accurate_ratios(const accurate_ratio_args& a, const auto_bounds& b,
                            cudaStream_t stream) {
  column_max_kernel<<<grid_dim(a.n, 1, 65535), 256, 0, stream>>>(a.u, a.nblk, a.m, a.n, a.m_pad,
                                                                 a.n_pad, a.col_max);
  column_ratio_kernel<<<grid_dim(a.n, 256), 256, 0, stream>>>(a.n, a.k, a.col_max, a.b, b,
                                                              a.head_all, a.worst_b, a.exps_all_b);
  row_max_all_kernel<<<dim3(grid_dim(a.m, 256), grid_dim(a.n, kRowChunk, 65535)), 256, 0, stream>>>(
      a.u, a.nblk, a.m, a.n, a.m_pad, a.n_pad, a.head_all, a.row_max_all);
  row_ratio_kernel<<<grid_dim(a.m, 256), 256, 0, stream>>>(a.m, a.k, a.row_max_all, a.a, b,
                                                           a.worst_a, a.exps_all_a);
}

}  // namespace ozdgemm::detail
