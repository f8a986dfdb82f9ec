#include <algorithm>
#include <cmath>

#include "band_codes.cuh"
#include "certify.cuh"
#include "core/certified_bound.hpp"
#include "core/moduli.hpp"
#include "core/scaling_rules.hpp"
#include "launch_common.cuh"
#include "planes.cuh"
#include "scan.cuh"

namespace ozdgemm::detail {
namespace {

// The tiled plane writer's generator (planes.cuh) of the band planes alone: plane t keeps the
// codes of band t.
struct band_gen {
  using vec = int;  // band_codes::top
  using state = uint32_t;
  band_codes bc;
  __device__ vec vector(int64_t v) const { return bc.top(v); }
  __device__ state prepare(double x, int top) const { return band_codes::code(x, top); }
  __device__ bool narrow(const state&) const { return false; }  // one path
  template <bool, bool>
  __device__ void pack(const state (&st)[kPlaneRun], int t, uint32_t (&w)[2]) const {
    band_codes::plane_word(st, t, w);
  }
};

struct norm1_op {
  using acc_t = unsigned long long;
  const int* emax_enc;
  unsigned long long* norm_sum;
  __device__ acc_t init() const { return 0; }
  __device__ void add(acc_t& a, double x, int64_t v) const {
    a += norm1_term(x, decode_emax(emax_enc[v]));
  }
  __device__ void merge(acc_t& a, const acc_t& b) const { a += b; }
  __device__ void commit(int64_t v, const acc_t& a) const {
    if (a != 0) atomicAdd(norm_sum + v, a);
  }
};

struct norm_pair_op {
  struct acc_t {
    unsigned long long q2, l1;
  };
  const int* emax_enc;
  unsigned long long* sum_q2;
  unsigned long long* norm_sum;
  __device__ acc_t init() const { return {0, 0}; }
  __device__ void add(acc_t& a, double x, int64_t v) const {
    const int emax = decode_emax(emax_enc[v]);
    a.q2 += norm_square_term(x, emax);
    a.l1 += norm1_term(x, emax);
  }
  __device__ void merge(acc_t& a, const acc_t& b) const {
    a.q2 += b.q2;
    a.l1 += b.l1;
  }
  __device__ void commit(int64_t v, const acc_t& a) const {
    if (a.q2 != 0) atomicAdd(sum_q2 + v, a.q2);
    if (a.l1 != 0) atomicAdd(norm_sum + v, a.l1);
  }
};

__global__ void band_drop_kernel(int64_t nvec, const int* emax_enc,
                                 const unsigned long long* exp_sum, const unsigned int* nnz,
                                 int* drop) {
  const int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v < nvec)
    drop[v] = band_drop(decode_emax(emax_enc[v]), static_cast<long long>(exp_sum[v]), nnz[v]);
}

__global__ void band_accumulate_kernel(unsigned long long* g, const int32_t* part, int64_t count,
                                       int shift) {
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    g[e] += static_cast<unsigned long long>(static_cast<uint32_t>(part[e])) << shift;
}

// G of element (row ii of the block, column j): the 64-bit sums, or with one k-block the band
// GEMM's INT32 sums themselves (>= 0: the same values).
__device__ unsigned long long band_sum(const certify_args& a, int64_t j, int64_t ii) {
  return a.g32 != nullptr
             ? static_cast<unsigned long long>(static_cast<uint32_t>(a.g32[j * a.ld + ii]))
             : a.g[j * a.ld + ii];
}

// Two kernels, one thread per row of the block looping over columns (blockIdx.y strided), both
// committing per block, with atomicMax on the bits of non-negative doubles (exact, order-free).
//
// certified_walk_kernel, for a finite target (every target but `max`). The chooser
// (search_count) finds the smallest s whose worst ratio is at most the target, and the ratio of
// every element is non-increasing in s: its factors 2^-(h(s) + sh(s)) are, since every
// exponent and the rounding to nearest grow with L(s) (tests/cpu/certified_choice_test.cpp,
// CertifiedRatio.FactorsNonIncreasingInS), and every operation of certified_ratio_from is
// monotone in them. So each element only needs the smallest s still open: if it meets the
// target there it meets it at every larger s; if not, a bisection over the larger s finds the
// smallest s it meets, and every s below is settled (ruled out) for the whole call. Per element
// that is one evaluation once the first elements have settled the small s. The slots then hold
//   s settled anywhere:   +inf;
//   s open, below 20:     the largest ratio over all elements, each taken at the s it met the
//                         target at (at most the chosen s), so an upper bound of the chosen s's
//                         worst ratio, and at most the target;
//   s = 20:               the larger of that and the ratios of s = 20 the elements that reached
//                         it had: the worst ratio exactly when some element misses the target
//                         at 20 (the call then runs native and reports it).
// The chooser therefore picks the same s as over the exact ratios (the host reference's), and
// reports for it an upper bound of its worst ratio rather than the ratio itself.
//
// certified_ratio_all_kernel, for the `max` target (+inf here: its bound needs the exact ratio
// of s = 20 first, and the bisection the exact ratio of every s it visits): the row's factors of
// all 19 s in registers, the exact worst ratio of every s, reduced over the block.
constexpr int kCertifyThreads = 256;
constexpr int kSpan = kMaxModuli - kMinModuli + 1;  // the slots t = s - kMinModuli
constexpr uint32_t kAllSlots = (uint32_t{1} << kSpan) - 1, kLastSlot = uint32_t{1} << (kSpan - 1);

// The block's open slots, from the slots earlier blocks committed: bit t clear where s = t +
// kMinModuli was settled (its ratio above the target) there. s = 20 is never settled.
__device__ void open_slots(const certify_args& a, uint32_t* block_open) {
  if (threadIdx.x == 0) *block_open = kAllSlots;
  __syncthreads();
  if (threadIdx.x < kSpan - 1 && bits_double(a.worst[threadIdx.x + kMinModuli]) > a.target)
    atomicAnd(block_open, ~(uint32_t{1} << threadIdx.x));
  __syncthreads();
}

// Row ii of the block: its index in C, largest exponent, whether it takes part (not padding,
// not zero, no Inf/NaN), its normalised l1 norm and band drop.
struct certify_row {
  int64_t ii, i;
  int emax;
  bool live;
  double norm;
  int drop;
};
__device__ certify_row row_at(const certify_args& a, int64_t ii) {
  certify_row r;
  r.ii = ii;
  r.i = a.i0 + r.ii;
  const bool in = r.ii < a.rows;
  r.emax = in ? decode_emax(a.emax_a[r.i]) : kZeroExponent;
  r.live = in && r.emax != kZeroExponent && a.flags_a[r.i] == 0;
  r.norm = r.live ? norm_from_sum(a.norm_a[r.i]) : 0.0;
  r.drop = r.live ? a.drop_a[r.i] : 0;
  return r;
}

// The scale exponents of slot t (s = t + kMinModuli) that the ratio's factors undo: row `row`'s,
// and column j's of largest exponent emb, each with the slot's rounding shift (one more where
// the CRT of s rounds to nearest).
__device__ int slot_shift(const certify_args& a, int t) {
  return static_cast<int>((a.nearest_mask >> (t + kMinModuli)) & 1u);
}
__device__ int row_scale(const certify_args& a, const certify_row& row, int t) {
  return a.exps_all_a[t * a.m + row.i] + row.emax + slot_shift(a, t);
}
// The columns a launch covers (certify_args::cols).
OZDGEMM_HD int64_t columns(const certify_args& a) { return a.cols > 0 ? a.cols : a.n; }
__device__ int col_scale(const certify_args& a, int64_t j, int emb, int t) {
  return a.exps_all_b[t * a.n + j] + emb + slot_shift(a, t);
}

__global__ void __launch_bounds__(kCertifyThreads) certified_ratio_all_kernel(certify_args a) {
  constexpr uint32_t kAll = kAllSlots, kLast = kLastSlot;
  __shared__ uint32_t block_open;
  open_slots(a, &block_open);
  const certify_row row = row_at(a, static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x);
  const double kd = static_cast<double>(a.k);
  // pa(s) as doubles: kept as int exponents instead (fewer registers, the conversion in the loop
  // over s), a certified call at 4096^3 took 4.9 ms on the H200 instead of 4.0.
  double pa[kSpan], worst[kSpan];
#pragma unroll
  for (int t = 0; t < kSpan; ++t) {
    pa[t] = row.live ? pow2i(-row_scale(a, row, t)) : 0.0;
    worst[t] = 0.0;
  }
  uint32_t open = kAll;  // the s this thread still evaluates (bit s - kMinModuli)
  for (int64_t j = blockIdx.y; j < columns(a); j += gridDim.y) {
    const int emb = decode_emax(a.emax_b[j]);
    if (!row.live || emb == kZeroExponent || a.flags_b[j] != 0) continue;
    const double w = band_lower_bound(band_sum(a, j, row.ii), kCertBands, row.drop + a.drop_b[j]);
    if (w == 0.0) {  // no lower bound: no s is certified
#pragma unroll
      for (int t = 0; t < kSpan; ++t) worst[t] = INFINITY;
      open = kLast;
      atomicAnd(&block_open, kLast);
      continue;
    }
    open &= *static_cast<volatile uint32_t*>(&block_open) | kLast;
    const double inv_w = 1.0 / w;
    const double nb = norm_from_sum(a.norm_b[j]);
    uint32_t settled = 0;
#pragma unroll
    for (int t = 0; t < kSpan; ++t) {
      if (((open >> t) & 1u) == 0) continue;
      const double pb = pow2i(-col_scale(a, j, emb, t));
      const double r = certified_ratio_from(row.norm, nb, kd, pa[t], pb, inv_w);
      worst[t] = r > worst[t] ? r : worst[t];
      if (r > a.target) settled |= uint32_t{1} << t;
    }
    settled &= ~kLast;
    if (settled != 0) {
      open &= ~settled;
      atomicAnd(&block_open, ~settled);
    }
  }
  constexpr int kWarps = kCertifyThreads / 32;
  __shared__ double part[kSpan][kWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int t = 0; t < kSpan; ++t) {
    double r = worst[t];
#pragma unroll
    for (int mask = 16; mask > 0; mask /= 2) {
      const double o = __shfl_xor_sync(0xFFFFFFFFu, r, mask);
      r = o > r ? o : r;
    }
    if (lane == 0) part[t][warp] = r;
  }
  __syncthreads();
  if (threadIdx.x < kSpan) {
    double r = 0.0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) r = part[threadIdx.x][w] > r ? part[threadIdx.x][w] : r;
    if (r > 0.0)  // the max is exact and order-free: the same bits as the host's
      atomicMax(a.worst + threadIdx.x + kMinModuli,
                static_cast<unsigned long long>(double_bits(r)));
  }
}

// The walk visits the columns in tiles of kWalkCols. Per tile the block stages in shared memory
// each column's data and its scaled factors (certified_col_factors) of every slot from the one
// open when the tile starts. Each thread takes kWalkRows consecutive rows: one 16-byte load
// brings their G of a column (the INT32 plane; two for 64-bit sums), and the column's factors
// serve all of them. It takes its columns kWalkBatch at a time, loads their G together, and
// decides the batch's elements at the slot open when the batch starts with the filter
// (certified_filter_passes: three FP64 operations with directed rounding, no division, no
// conversion). A row that takes no part has zero factors, so its elements pass with T = 0. The
// few elements that fail take the exact ratio at the slot open then, and the ones that miss it
// bisect; once one element of a block has settled the small s, the rest of its batch start past
// them. On an H100 one row per thread took 71 us at 4096^3 and 220 at 8192^3, four rows 63 and
// 167 (bench/results/default, run 16).
constexpr int kWalkCols = 32, kWalkRows = 4, kWalkBatch = 2;
static_assert(kPad % kWalkRows == 0, "a thread's rows must lie inside the padded block");

// The G of rows ii0 .. ii0 + kWalkRows - 1 of column j, as the filter reads them (exact below
// 2^53; above, rounded down). ld and ii0 are multiples of kWalkRows and the planes 256-byte
// aligned, so the loads are aligned.
__device__ void walk_load_g(const certify_args& a, int64_t j, int64_t ii0,
                            double (&gd)[kWalkRows]) {
  if (a.g32 != nullptr) {
    const int4 g = *reinterpret_cast<const int4*>(a.g32 + j * a.ld + ii0);
    gd[0] = u32_to_double(static_cast<uint32_t>(g.x));
    gd[1] = u32_to_double(static_cast<uint32_t>(g.y));
    gd[2] = u32_to_double(static_cast<uint32_t>(g.z));
    gd[3] = u32_to_double(static_cast<uint32_t>(g.w));
  } else {
    const auto* p = reinterpret_cast<const ulonglong2*>(a.g + j * a.ld + ii0);
    const ulonglong2 lo = p[0], hi = p[1];
    gd[0] = u64_to_double_down(lo.x);
    gd[1] = u64_to_double_down(lo.y);
    gd[2] = u64_to_double_down(hi.x);
    gd[3] = u64_to_double_down(hi.y);
  }
}
static_assert(kWalkRows == 4, "walk_load_g loads four rows");

// Four blocks per SM: 64 registers (76 unbounded, three blocks), no spills; at 4096^3 the 512
// blocks of the pass then run in one wave on an H100 or H200 (132 SMs).
__global__ void __launch_bounds__(kCertifyThreads, 4) certified_walk_kernel(certify_args a) {
  constexpr int kLastT = kSpan - 1;
  constexpr uint32_t kLast = kLastSlot;
  __shared__ uint32_t block_open;  // bit t: s = t + kMinModuli not settled yet (20: never)
  __shared__ int col_emb[kWalkCols], col_drop[kWalkCols], tile_lo;
  __shared__ double col_nb[kWalkCols];
  __shared__ bool col_live[kWalkCols];
  __shared__ certified_col_scaled col_f[kSpan][kWalkCols];  // slots from tile_lo on
  open_slots(a, &block_open);
  const int64_t ii0 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kWalkRows;
  // Rows that take part; their data is read again where needed (rarely: a new lowest slot, an
  // element the filter fails), not held in registers.
  uint32_t live = 0;
#pragma unroll
  for (int r = 0; r < kWalkRows; ++r) live |= row_at(a, ii0 + r).live ? 1u << r : 0u;
  const double kd = static_cast<double>(a.k);
  const double tlo = certified_filter_target(a.target);
  auto lowest_open = [&] {
    return __ffs(*static_cast<volatile uint32_t*>(&block_open) | kLast) - 1;
  };
  int row_t = -1;                      // the slot of the rows' scaled factors
  certified_row_scaled rf[kWalkRows];  // zero for a row that takes no part
  certified_filter_max filtered;       // the elements the filter passed
  double passed = 0.0, last = 0.0;     // the largest exact ratio met, and of s = 20 missed
  const int64_t n = columns(a);
  for (int64_t jt = static_cast<int64_t>(blockIdx.y) * kWalkCols; jt < n;
       jt += static_cast<int64_t>(gridDim.y) * kWalkCols) {
    __syncthreads();  // the previous tile is done with the shared columns
    if (threadIdx.x == 0) tile_lo = lowest_open();
    if (threadIdx.x < kWalkCols) {
      const int q = threadIdx.x;
      const int64_t j = jt + q;
      const int emb = j < n ? decode_emax(a.emax_b[j]) : kZeroExponent;
      const bool col = emb != kZeroExponent && a.flags_b[j] == 0;
      col_live[q] = col;
      col_emb[q] = emb;
      col_drop[q] = col ? a.drop_b[j] : 0;
      col_nb[q] = col ? norm_from_sum(a.norm_b[j]) : 0.0;
    }
    __syncthreads();
    const int t0 = tile_lo;
    for (int x = threadIdx.x; x < (kSpan - t0) * kWalkCols; x += kCertifyThreads) {
      const int t = t0 + x / kWalkCols, q = x % kWalkCols;
      certified_col_scaled f;
      if (col_live[q])
        f = certified_col_factors(col_nb[q], kd, col_scale(a, jt + q, col_emb[q], t), col_drop[q]);
      col_f[t][q] = f;
    }
    __syncthreads();
    if (live == 0) continue;
    const int cols = n - jt < kWalkCols ? static_cast<int>(n - jt) : kWalkCols;
    auto ratio = [&](const certify_row& row, int q, int t, double inv_w) {
      const double pa = pow2i(-row_scale(a, row, t));
      const double pb = pow2i(-col_scale(a, jt + q, col_emb[q], t));
      return certified_ratio_of(certified_numerator(row.norm, col_nb[q], kd, pa, pb), inv_w);
    };
    for (int q0 = 0; q0 < cols; q0 += kWalkBatch) {
      const int lo = lowest_open();  // >= t0: slots are only ever settled
      if (lo != row_t) {
        row_t = lo;
#pragma unroll
        for (int r = 0; r < kWalkRows; ++r) {
          rf[r] = certified_row_scaled{};
          if (((live >> r) & 1u) != 0) {
            const certify_row row = row_at(a, ii0 + r);
            rf[r] = certified_row_factors(row.norm, row_scale(a, row, lo), row.drop);
          }
        }
      }
      // G of the batch's columns, loaded together (past the tile: zeros, which are not read).
      double gd[kWalkBatch][kWalkRows];
#pragma unroll
      for (int u = 0; u < kWalkBatch; ++u) {
        if (q0 + u < cols) {
          walk_load_g(a, jt + q0 + u, ii0, gd[u]);
        } else {
#pragma unroll
          for (int r = 0; r < kWalkRows; ++r) gd[u][r] = 0.0;
        }
      }
      uint32_t failed = 0;  // bit u kWalkRows + r: element (row r, column q0 + u) is exact
#pragma unroll
      for (int u = 0; u < kWalkBatch; ++u) {
        if (q0 + u >= cols) break;
        const certified_col_scaled cf = col_f[lo][q0 + u];
#pragma unroll
        for (int r = 0; r < kWalkRows; ++r) {
          const double t = certified_scaled_numerator(rf[r], cf);
          if (certified_filter_passes(t, gd[u][r], tlo))
            filtered.add(t, gd[u][r]);
          else
            failed |= uint32_t{1} << (u * kWalkRows + r);
        }
      }
#pragma unroll 1
      while (failed != 0) {
        const int bit = __ffs(failed) - 1;
        failed &= failed - 1;
        const int q = q0 + bit / kWalkRows;
        const certify_row row = row_at(a, ii0 + bit % kWalkRows);
        if (!row.live || !col_live[q]) continue;
        const double w =
            band_lower_bound(band_sum(a, jt + q, row.ii), kCertBands, row.drop + col_drop[q]);
        if (w == 0.0) {  // no lower bound: no s is certified
          last = INFINITY;
          atomicAnd(&block_open, kLast);
          continue;
        }
        const double inv_w = 1.0 / w;
        // The smallest slot still open: every one below was settled, by any element.
        const int cur = lowest_open();
        const double r = ratio(row, q, cur, inv_w);
        if (r <= a.target) {
          passed = r > passed ? r : passed;
          continue;
        }
        if (cur == kLastT) {
          last = r > last ? r : last;
          continue;
        }
        // Missed at cur: the smallest slot in (cur, kLastT] this element meets, by bisection;
        // `bad` stays a slot it misses, `good` one it meets (kSpan: none).
        int bad = cur, good = kSpan;
        double r_good = 0.0, r_bad = r;
        while (good - bad > 1) {
          const int mid = bad + (good - bad) / 2;
          const double rm = ratio(row, q, mid, inv_w);
          if (rm <= a.target) {
            good = mid;
            r_good = rm;
          } else {
            bad = mid;
            r_bad = rm;
          }
        }
        if (good == kSpan) {  // missed even at s = 20: bad == kLastT, r_bad its ratio
          last = r_bad > last ? r_bad : last;
          atomicAnd(&block_open, kLast);
        } else {
          passed = r_good > passed ? r_good : passed;
          atomicAnd(&block_open, ~((uint32_t{1} << good) - 1) | kLast);
        }
      }
    }
  }
  {
    const double f = filtered.bound(a.target);
    passed = f > passed ? f : passed;
  }
  constexpr int kWarps = kCertifyThreads / 32;
  __shared__ double part[2][kWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) {
    const double o = __shfl_xor_sync(0xFFFFFFFFu, passed, mask);
    const double p = __shfl_xor_sync(0xFFFFFFFFu, last, mask);
    passed = o > passed ? o : passed;
    last = p > last ? p : last;
  }
  if (lane == 0) {
    part[0][warp] = passed;
    part[1][warp] = last;
  }
  __syncthreads();
  if (threadIdx.x < kSpan) {
    double u = 0.0, l = 0.0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      u = part[0][w] > u ? part[0][w] : u;
      l = part[1][w] > l ? part[1][w] : l;
    }
    const int t = threadIdx.x;
    const bool open = ((block_open >> t) & 1u) != 0;
    const double v = t == kLastT ? (l > u ? l : u) : (open ? u : INFINITY);
    if (v > 0.0)
      atomicMax(a.worst + t + kMinModuli, static_cast<unsigned long long>(double_bits(v)));
  }
}

}  // namespace

void launch_band_drops(int64_t nvec, const int* emax_enc, const unsigned long long* exp_sum,
                       const unsigned int* nnz, int* drop, cudaStream_t stream) {
  band_drop_kernel<<<grid_dim(nvec, 256), 256, 0, stream>>>(nvec, emax_enc, exp_sum, nnz, drop);
}

void launch_band_planes(const operand_vectors& v, const int* emax_enc, const int* drop,
                        int8_t* planes, cudaStream_t stream) {
  launch_plane_tiles(v.x, v.nvec, v.nvec_pad, v.k, v.k_pad, v.alpha_dev, band_gen{{emax_enc, drop}},
                     kCertBands, planes, stream);
}

void launch_norm1_scan(const operand_vectors& v, const int* emax_enc, unsigned long long* norm_sum,
                       cudaStream_t stream) {
  launch_scan(v.x, v.nvec, v.k, v.alpha_dev, norm1_op{emax_enc, norm_sum}, stream);
}

void launch_norm_pair_scan(const operand_vectors& v, const int* emax_enc,
                           unsigned long long* sum_q2, unsigned long long* norm_sum,
                           cudaStream_t stream) {
  launch_scan(v.x, v.nvec, v.k, v.alpha_dev, norm_pair_op{emax_enc, sum_q2, norm_sum}, stream);
}

void launch_band_accumulate(unsigned long long* g, const int32_t* part, int64_t count, int shift,
                            cudaStream_t stream) {
  band_accumulate_kernel<<<grid_dim(count, 256, 8192), 256, 0, stream>>>(g, part, count, shift);
}

void launch_certified_ratios(const certify_args& a, cudaStream_t stream) {
  // About 1024 blocks: enough to fill the GPU, few enough that each thread covers several
  // columns and the commits stay few.
  if (a.target == INFINITY) {
    const unsigned gx = grid_dim(a.rows, kCertifyThreads);
    const int64_t gy = std::max<int64_t>(1, 1024 / gx);
    certified_ratio_all_kernel<<<dim3(gx, grid_dim(columns(a), 1, gy)), kCertifyThreads, 0,
                                 stream>>>(a);
  } else {  // whole tiles of columns per block, kWalkRows rows per thread
    const unsigned gx = grid_dim(a.rows, kCertifyThreads * kWalkRows);
    const int64_t gy = std::max<int64_t>(1, 1024 / gx);
    certified_walk_kernel<<<dim3(gx, grid_dim(columns(a), kWalkCols, gy)), kCertifyThreads, 0,
                            stream>>>(a);
  }
}

}  // namespace ozdgemm::detail
