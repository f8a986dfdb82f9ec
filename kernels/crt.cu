#include <array>
#include <stdexcept>
#include <utility>

#include "core/crt.hpp"
#include "core/element.hpp"
#include "core/karatsuba.hpp"
#include "core/special_values.hpp"
#include "crt.cuh"
#include "launch_common.cuh"

namespace ozdgemm::detail {
namespace {

constexpr int kCrtThreads = 128;

// One thread per element of C; the column loop only runs when n > 65535. The moduli count is
// a template parameter so that the s residue loads are all issued before any arithmetic (the
// runtime-s loop issued one load, waited for it, then did the CRT step: latency-bound, with
// DRAM at 25% and 21.5 ms at 16384^2, s = 15, bench/results/probes/README.md)
// and the weights become constant-bank operands. The CRT code and its limb count are those of
// the host reference (core/crt.hpp); the residues here are only reduced to [0, 2 m_t), the
// reference's to [0, m_t), and the result is a function of X alone, so the bits are the same.
// Part: whether the launch may compute a triangle of C (crt_args::part); the chosen count's
// kernel never does (graph conditionals take no triangle, engine/run.cpp) and keeps its 32
// registers without the mask.
template <int S, bool Part = true>
__device__ __forceinline__ void crt_rows(const gemm_problem& p, const crt_args& args,
                                         const modulus_table& tb, scalar_arg alpha_arg,
                                         scalar_arg beta_arg) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kCrtThreads + threadIdx.x;
  if (i >= p.m) return;
  const double alpha = alpha_arg.get(), beta = beta_arg.get();
  const int64_t plane = args.m_pad * args.n_pad;
  for (int64_t j = blockIdx.y; j < p.n; j += gridDim.y) {
    if (Part && outside_part(args.part, i, j, args.diag)) continue;
    double* c = p.c + j * p.ldc + i;
    if (alpha == 0.0) {
      *c = beta == 0.0 ? 0.0 : mul_rn(beta, *c);
      continue;
    }
    double v;
    if ((args.flags_a[i] | args.flags_b[j]) != 0) {
      v = nonfinite_dot(args.a, i, args.b, j, p.k);
    } else {
      const int32_t* pr = args.prod + j * args.m_pad + i;
      int32_t r[S];
#pragma unroll
      for (int t = 0; t < S; ++t) r[t] = __ldcs(pr + t * plane);  // read once: stream
      crt_accumulator<limbs_for(S)> acc;  // as few limbs as M needs (core/crt.hpp)
#pragma unroll
      for (int t = 0; t < S; ++t) acc.add(crt_residue(r[t], tb, t), tb, t);
      v = acc.finish(tb, -(args.exp_a[i] + args.exp_b[j]));
    }
    *c = apply_alpha_beta(v, alpha, beta, c);
  }
}

// The Karatsuba form: columns j and n' + j of C (T_re and T_im) from the three products P1, P2,
// P3 of each modulus, combined per element as karatsuba_parts does. Each product is read once
// and nothing is written back between the GEMMs and the CRT, where a combination pass would
// read 12 bytes and write 8 per element and modulus before the CRT read 8 of them again. The
// CRT receives the same INT32 values, so the bits are those of the pass.
template <int S, bool Part = true>
__device__ __forceinline__ void crt_karatsuba_rows(const gemm_problem& p, const crt_args& args,
                                                   const modulus_table& tb, scalar_arg alpha_arg,
                                                   scalar_arg beta_arg) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kCrtThreads + threadIdx.x;
  if (i >= p.m) return;
  const double alpha = alpha_arg.get(), beta = beta_arg.get();
  const int64_t nh = args.half_n;
  const int64_t plane = args.m_pad * args.n_pad, half = args.m_pad * nh;
  const int64_t cols = args.cols > 0 ? args.cols : nh;
  for (int64_t j = blockIdx.y; j < cols; j += gridDim.y) {
    if (Part && outside_part(args.part, i, j, args.diag)) continue;
    double* const c[2] = {p.c + j * p.ldc + i, p.c + (j + nh) * p.ldc + i};
    if (alpha == 0.0) {
      for (double* e : c) *e = beta == 0.0 ? 0.0 : mul_rn(beta, *e);
      continue;
    }
    const bool finite[2] = {(args.flags_a[i] | args.flags_b[j]) == 0,
                            (args.flags_a[i] | args.flags_b[j + nh]) == 0};
    double v[2] = {0.0, 0.0};
    if (finite[0] || finite[1]) {
      const int32_t* p1 = args.prod + j * args.m_pad + i;
      const int32_t* p3 = args.prod3 + j * args.m_pad + i;
      int32_t r1[S], r2[S], r3[S];
#pragma unroll
      for (int t = 0; t < S; ++t) {  // every load issued before any arithmetic; read once
        r1[t] = __ldcs(p1 + t * plane);
        r2[t] = __ldcs(p1 + half + t * plane);
        r3[t] = __ldcs(p3 + t * half);
      }
      if (args.negate_p2) {
#pragma unroll
        for (int t = 0; t < S; ++t) r2[t] = -r2[t];  // exact: the k-blocks keep |P2| < 2^31
      }
      crt_accumulator<limbs_for(S)> acc_re, acc_im;
#pragma unroll
      for (int t = 0; t < S; ++t) {
        const karatsuba_part_sums r = karatsuba_parts(r1[t], r2[t], r3[t], tb, t);
        acc_re.add(crt_residue(r.re, tb, t), tb, t);
        acc_im.add(crt_residue(r.im, tb, t), tb, t);
      }
      v[0] = acc_re.finish(tb, -(args.exp_a[i] + args.exp_b[j]));
      v[1] = acc_im.finish(tb, -(args.exp_a[i] + args.exp_b[j + nh]));
    }
    for (int part = 0; part < 2; ++part) {
      if (!finite[part]) v[part] = nonfinite_dot(args.a, i, args.b, j + part * nh, p.k);
      *c[part] = apply_alpha_beta(v[part], alpha, beta, c[part]);
    }
  }
}

template <bool Karatsuba, int S>
__global__ void __launch_bounds__(kCrtThreads)
    crt_kernel(gemm_problem p, crt_args args, modulus_table tb, scalar_arg alpha_arg,
               scalar_arg beta_arg, const int* only_if) {
  if (only_if != nullptr && *only_if != S) return;
  if constexpr (Karatsuba)
    crt_karatsuba_rows<S>(p, args, tb, alpha_arg, beta_arg);
  else
    crt_rows<S>(p, args, tb, alpha_arg, beta_arg);
}

// Matrix blockIdx.z of a batch (launch_batched_crt): its own problem and arguments, then the
// rows of one call, so each C_i gets the single call's arithmetic.
template <int S>
__global__ void __launch_bounds__(kCrtThreads)
    batched_crt_kernel(gemm_problem p, crt_args args, crt_batch b, modulus_table tb,
                       scalar_arg alpha_arg, scalar_arg beta_arg) {
  const int64_t z = blockIdx.z;
  p.c += z * b.stride_c;
  args.a.ptr += z * b.stride_a;
  args.b.ptr += z * b.stride_b;
  args.prod += z * b.prod_stride;
  args.exp_a += z * b.vec_a;
  args.flags_a += z * b.vec_a;
  args.exp_b += z * b.vec_b;
  args.flags_b += z * b.vec_b;
  crt_rows<S, false>(p, args, tb, alpha_arg, beta_arg);  // batches take no triangle
}

// The tables of every s for the count chosen on the GPU, which the launch cannot pass by value
// (the host does not know s): entry s - kMinModuli, uploaded once per device
// (upload_chosen_tables). Read with a uniform s, as the parameter bank is.
__constant__ modulus_table chosen_tables[kMaxModuli - kMinModuli + 1];

// One case per count: the one whose S equals s runs, with its table from the constant bank. A
// switch, not a chain of ifs: ptxas (CUDA 13.0, sm_90) gives the chain 44 registers (11 blocks
// of 128 threads per SM), the switch 32 and 16 bytes of spill (16 blocks, as crt_kernel<S>);
// this streaming kernel needs the occupancy for its loads in flight. Karatsuba: the form's
// rows (crt_args::prod3), one kernel of their own so that the plain one keeps its registers;
// the plain one's launch bound holds it at 32 (16 blocks).
static_assert(kMinModuli == 2 && kMaxModuli == 20, "one case per moduli count below");
template <bool Karatsuba>
__global__ void __launch_bounds__(kCrtThreads, Karatsuba ? 1 : 16)
    chosen_crt_kernel(gemm_problem p, crt_args args, const int* chosen, scalar_arg alpha_arg,
                      scalar_arg beta_arg) {
  const int s = *chosen;
  switch (s) {  // below kMinModuli (0: native DGEMM writes C) nothing runs
    // clang-format off
#define OZDGEMM_CRT_CASE(S)                                                                \
    case S:                                                                                \
      if constexpr (Karatsuba)                                                             \
        crt_karatsuba_rows<S, false>(p, args, chosen_tables[S - kMinModuli], alpha_arg,   \
                                     beta_arg);                                            \
      else                                                                                 \
        crt_rows<S, false>(p, args, chosen_tables[S - kMinModuli], alpha_arg, beta_arg);   \
      break;
    OZDGEMM_CRT_CASE(2)  OZDGEMM_CRT_CASE(3)  OZDGEMM_CRT_CASE(4)  OZDGEMM_CRT_CASE(5)
    OZDGEMM_CRT_CASE(6)  OZDGEMM_CRT_CASE(7)  OZDGEMM_CRT_CASE(8)  OZDGEMM_CRT_CASE(9)
    OZDGEMM_CRT_CASE(10) OZDGEMM_CRT_CASE(11) OZDGEMM_CRT_CASE(12) OZDGEMM_CRT_CASE(13)
    OZDGEMM_CRT_CASE(14) OZDGEMM_CRT_CASE(15) OZDGEMM_CRT_CASE(16) OZDGEMM_CRT_CASE(17)
    OZDGEMM_CRT_CASE(18) OZDGEMM_CRT_CASE(19) OZDGEMM_CRT_CASE(20)
#undef OZDGEMM_CRT_CASE
    default: break;
    // clang-format on
  }
}

using crt_launcher = void (*)(dim3, cudaStream_t, const gemm_problem&, const crt_args&,
                              const modulus_table&, scalar_arg, scalar_arg, const int*);

template <bool Karatsuba, int S>
void launch_crt_s(dim3 grid, cudaStream_t stream, const gemm_problem& p, const crt_args& args,
                  const modulus_table& tb, scalar_arg alpha, scalar_arg beta, const int* only_if) {
  crt_kernel<Karatsuba, S><<<grid, kCrtThreads, 0, stream>>>(p, args, tb, alpha, beta, only_if);
}

// Entry i launches the kernel for s = kMinModuli + i: only the counts a table can have.
template <bool Karatsuba, int... I>
constexpr auto crt_launchers(std::integer_sequence<int, I...>) {
  return std::array<crt_launcher, sizeof...(I)>{&launch_crt_s<Karatsuba, kMinModuli + I>...};
}

using moduli_counts = std::make_integer_sequence<int, kMaxModuli - kMinModuli + 1>;
constexpr auto kCrtLaunchers = crt_launchers<false>(moduli_counts{});
constexpr auto kCrtKaratsubaLaunchers = crt_launchers<true>(moduli_counts{});

using batched_crt_launcher = void (*)(dim3, cudaStream_t, const gemm_problem&, const crt_args&,
                                      const crt_batch&, const modulus_table&, scalar_arg,
                                      scalar_arg);
template <int S>
void launch_batched_crt_s(dim3 grid, cudaStream_t stream, const gemm_problem& p,
                          const crt_args& args, const crt_batch& b, const modulus_table& tb,
                          scalar_arg alpha, scalar_arg beta) {
  batched_crt_kernel<S><<<grid, kCrtThreads, 0, stream>>>(p, args, b, tb, alpha, beta);
}
template <int... I>
constexpr auto batched_crt_launchers(std::integer_sequence<int, I...>) {
  return std::array<batched_crt_launcher, sizeof...(I)>{&launch_batched_crt_s<kMinModuli + I>...};
}
constexpr auto kBatchedCrtLaunchers = batched_crt_launchers(moduli_counts{});

__global__ void fold_kernel(int32_t* prod, int64_t plane, modulus_table tb) {
  const int t = blockIdx.y;
  for (int64_t x = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; x < plane;
       x += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int32_t* e = prod + t * plane + x;
    *e = static_cast<int32_t>(product_residue(*e, tb, t));
  }
}

__global__ void scale_c_kernel(double* c, int64_t ldc, int64_t m, int64_t n, scalar_arg beta_arg) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const double beta = beta_arg.get();
  for (int64_t j = blockIdx.y; j < n; j += gridDim.y) {
    double* e = c + j * ldc + i;
    *e = beta == 0.0 ? 0.0 : mul_rn(beta, *e);
  }
}

// The grid of one CRT launch: a thread per row and column of C, or per row and pair of columns
// j, n' + j in the Karatsuba form.
dim3 crt_grid(const gemm_problem& p, const crt_args& args) {
  if (args.prod3 == nullptr) return dim3(grid_dim(p.m, kCrtThreads), grid_dim(p.n, 1, 65535));
  if (p.n != 2 * args.half_n) throw std::invalid_argument("Karatsuba CRT: n != 2 n'");
  const int64_t cols = args.cols > 0 ? args.cols : args.half_n;
  return dim3(grid_dim(p.m, kCrtThreads), grid_dim(cols, 1, 65535));
}

}  // namespace

void launch_crt(const gemm_problem& p, const crt_args& args, const modulus_table& tb,
                scalar_arg alpha, scalar_arg beta, cudaStream_t stream, const int* only_if) {
  if (tb.s < kMinModuli || tb.s > kMaxModuli) throw std::invalid_argument("moduli count");
  const auto& launchers = args.prod3 != nullptr ? kCrtKaratsubaLaunchers : kCrtLaunchers;
  launchers[tb.s - kMinModuli](crt_grid(p, args), stream, p, args, tb, alpha, beta, only_if);
}

void launch_batched_crt(const gemm_problem& p, const crt_args& args, const crt_batch& batch,
                        const modulus_table& tb, scalar_arg alpha, scalar_arg beta,
                        cudaStream_t stream) {
  if (tb.s < kMinModuli || tb.s > kMaxModuli) throw std::invalid_argument("moduli count");
  if (args.prod3 != nullptr) throw std::invalid_argument("batched CRT: no Karatsuba form");
  if (batch.count < 1 || batch.count > 65535) throw std::invalid_argument("batched CRT: count");
  dim3 grid = crt_grid(p, args);
  grid.z = static_cast<unsigned>(batch.count);
  kBatchedCrtLaunchers[tb.s - kMinModuli](grid, stream, p, args, batch, tb, alpha, beta);
}

cudaError_t upload_chosen_tables(cudaStream_t stream) {
  modulus_table all[kMaxModuli - kMinModuli + 1];
  for (int s = kMinModuli; s <= kMaxModuli; ++s) all[s - kMinModuli] = moduli_for(s);
  const cudaError_t e =
      cudaMemcpyToSymbolAsync(chosen_tables, all, sizeof all, 0, cudaMemcpyHostToDevice, stream);
  return e != cudaSuccess ? e : cudaStreamSynchronize(stream);
}

cudaError_t load_chosen_crt_kernels() {
  return load_kernels(chosen_crt_kernel<false>, chosen_crt_kernel<true>, fold_kernel,
                      scale_c_kernel);
}

void launch_chosen_crt(const gemm_problem& p, const crt_args& args, const int* chosen,
                       scalar_arg alpha, scalar_arg beta, cudaStream_t stream) {
  const dim3 grid = crt_grid(p, args);
  if (args.prod3 != nullptr)
    chosen_crt_kernel<true><<<grid, kCrtThreads, 0, stream>>>(p, args, chosen, alpha, beta);
  else
    chosen_crt_kernel<false><<<grid, kCrtThreads, 0, stream>>>(p, args, chosen, alpha, beta);
}

void launch_fold(int32_t* prod, int64_t plane, const modulus_table& tb, cudaStream_t stream) {
  fold_kernel<<<dim3(grid_dim(plane, 256, 65535), tb.s), 256, 0, stream>>>(prod, plane, tb);
}

void launch_scale_c(double* c, int64_t ldc, int64_t m, int64_t n, scalar_arg beta,
                    cudaStream_t stream) {
  scale_c_kernel<<<dim3(grid_dim(m, 128), grid_dim(n, 1, 65535)), 128, 0, stream>>>(c, ldc, m, n,
                                                                                    beta);
}

}  // namespace ozdgemm::detail
