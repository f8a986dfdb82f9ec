#include "complex_pack.cuh"
#include "launch_common.cuh"

namespace ozdgemm::detail {
namespace {

constexpr int kThreads = 128;

// alpha == 0 + 0i in device pointer mode: A and B must not be read (BLAS semantics; the
// complex twin of launch_common.cuh's skip_inputs).
__device__ __forceinline__ bool skip_complex_inputs(const double* alpha_dev) {
  return alpha_dev != nullptr && alpha_dev[0] == 0.0 && alpha_dev[1] == 0.0;
}

// One thread per row i of op(A) (consecutive threads write consecutive elements of a column
// of A'), over the k' columns of a half (the padding gets zeros); the column loop only runs
// when k' > 65535.
// Matrix blockIdx.z of a batch: its operand and its pack (complex_batch_strides).
__device__ __forceinline__ void to_matrix(const complex_batch_strides& batch, const double** in,
                                          double** out) {
  const int64_t z = blockIdx.z;
  *in += 2 * z * batch.in;
  *out += z * batch.out;
}

__global__ void pack_a_kernel(complex_operand a, int64_t m, int64_t k, const double* alpha_dev,
                              double* a_pack, complex_batch_strides batch) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= m) return;
  to_matrix(batch, &a.ptr, &a_pack);
  const bool zero = skip_complex_inputs(alpha_dev);
  const int64_t kh = embedding_half(k);
  for (int64_t l = blockIdx.y; l < kh; l += gridDim.y) pack_a_element(a, m, k, i, l, zero, a_pack);
}

// One thread per element l < k' of a column j < n' of op(B) (the k direction is contiguous in
// B*; the padding gets zeros).
__global__ void pack_b_kernel(complex_operand b, int64_t n, int64_t k, const double* alpha_dev,
                              double* b_pack, complex_batch_strides batch) {
  const int64_t l = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (l >= embedding_half(k)) return;
  to_matrix(batch, &b.ptr, &b_pack);
  const bool zero = skip_complex_inputs(alpha_dev);
  const int64_t nh = embedding_half(n);
  for (int64_t j = blockIdx.y; j < nh; j += gridDim.y) pack_b_element(b, n, k, j, l, zero, b_pack);
}

__global__ void complex_epilogue_kernel(complex_problem p, const double* t,
                                        complex_scalar_arg alpha_arg, complex_scalar_arg beta_arg,
                                        complex_batch_strides batch, int part, bool real_diagonal) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= p.m) return;
  const int64_t z = blockIdx.z;
  p.c += 2 * z * batch.in;
  if (t != nullptr) t += z * batch.out;
  const complex_value alpha = alpha_arg.get(), beta = beta_arg.get();
  const int64_t nh = embedding_half(p.n);
  for (int64_t j = blockIdx.y; j < p.n; j += gridDim.y) {
    if (outside_part(part, i, j, 0)) continue;
    double* c = p.c + 2 * (j * p.ldc + i);
    // Not dereferenced when alpha == 0 (t may be null then).
    const double* t_re = t == nullptr ? nullptr : t + j * p.m + i;
    const double* t_im = t == nullptr ? nullptr : t + (nh + j) * p.m + i;
    const complex_value r = complex_epilogue(t_re, t_im, alpha, beta, c);
    c[0] = r.re;
    c[1] = real_diagonal && i == j ? 0.0 : r.im;
  }
}

}  // namespace

void launch_pack_a(const complex_operand& a, int64_t m, int64_t k, const double* alpha_dev,
                   double* a_pack, cudaStream_t stream, complex_batch_strides batch) {
  pack_a_kernel<<<dim3(grid_dim(m, kThreads), grid_dim(embedding_half(k), 1, 65535),
                       static_cast<unsigned>(batch.count)),
                  kThreads, 0, stream>>>(a, m, k, alpha_dev, a_pack, batch);
}

void launch_pack_b(const complex_operand& b, int64_t n, int64_t k, const double* alpha_dev,
                   double* b_pack, cudaStream_t stream, complex_batch_strides batch) {
  pack_b_kernel<<<dim3(grid_dim(embedding_half(k), kThreads), grid_dim(embedding_half(n), 1, 65535),
                       static_cast<unsigned>(batch.count)),
                  kThreads, 0, stream>>>(b, n, k, alpha_dev, b_pack, batch);
}

void launch_complex_epilogue(const complex_problem& p, const double* t, complex_scalar_arg alpha,
                             complex_scalar_arg beta, cudaStream_t stream,
                             complex_batch_strides batch, int part, bool real_diagonal) {
  complex_epilogue_kernel<<<dim3(grid_dim(p.m, kThreads), grid_dim(p.n, 1, 65535),
                                 static_cast<unsigned>(batch.count)),
                            kThreads, 0, stream>>>(p, t, alpha, beta, batch, part, real_diagonal);
}

}  // namespace ozdgemm::detail
