#include "crt.cuh"

#include "core/crt.hpp"
#include "core/element.hpp"
#include "core/special_values.hpp"
#include "launch_common.cuh"

namespace ozdgemm::detail {
namespace {

constexpr int kCrtThreads = 128;

__global__ void __launch_bounds__(kCrtThreads) crt_kernel(gemm_problem p, crt_args args,
                                                          modulus_table tb, scalar_arg alpha_arg,
                                                          scalar_arg beta_arg) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kCrtThreads + threadIdx.x;
  if (i >= p.m) return;
  const double alpha = alpha_arg.get(), beta = beta_arg.get();
  const int64_t plane = args.m_pad * args.n_pad;
  for (int64_t j = blockIdx.y; j < p.n; j += gridDim.y) {
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
      crt_accumulator acc;
      for (int t = 0; t < tb.s; ++t) acc.add(product_residue(pr[t * plane], tb, t), tb, t);
      v = acc.finish(tb, -(args.exp_a[i] + args.exp_b[j]));
    }
    *c = apply_alpha_beta(v, alpha, beta, c);
  }
}

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

}  // namespace

void launch_crt(const gemm_problem& p, const crt_args& args, const modulus_table& tb,
                scalar_arg alpha, scalar_arg beta, cudaStream_t stream) {
  const dim3 grid(grid_dim(p.m, kCrtThreads), grid_dim(p.n, 1, 65535));
  crt_kernel<<<grid, kCrtThreads, 0, stream>>>(p, args, tb, alpha, beta);
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
