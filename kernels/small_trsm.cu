#include "launch_common.cuh"
#include "small_trsm.cuh"

namespace ozdgemm::detail {
namespace {

constexpr int kThreads = 128;

// The arithmetic of one element type, each operation rounded to nearest (no contraction the
// compiler could choose differently).
__device__ __forceinline__ double zero_of(double) { return 0.0; }
__device__ __forceinline__ double one_of(double) { return 1.0; }
__device__ __forceinline__ bool is_zero(double x) { return x == 0.0; }
__device__ __forceinline__ double conj_of(double x) { return x; }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double sub_mul(double x, double t, double y) {  // x - t y
  return __fma_rn(-t, y, x);
}
__device__ __forceinline__ double div(double x, double d) { return __ddiv_rn(x, d); }

__device__ __forceinline__ cuDoubleComplex zero_of(cuDoubleComplex) {
  return make_cuDoubleComplex(0.0, 0.0);
}
__device__ __forceinline__ cuDoubleComplex one_of(cuDoubleComplex) {
  return make_cuDoubleComplex(1.0, 0.0);
}
__device__ __forceinline__ bool is_zero(cuDoubleComplex x) { return x.x == 0.0 && x.y == 0.0; }
__device__ __forceinline__ cuDoubleComplex conj_of(cuDoubleComplex x) { return cuConj(x); }
__device__ __forceinline__ cuDoubleComplex mul(cuDoubleComplex a, cuDoubleComplex b) {
  return make_cuDoubleComplex(__fma_rn(a.x, b.x, -__dmul_rn(a.y, b.y)),
                              __fma_rn(a.x, b.y, __dmul_rn(a.y, b.x)));
}
__device__ __forceinline__ cuDoubleComplex sub_mul(cuDoubleComplex x, cuDoubleComplex t,
                                                   cuDoubleComplex y) {
  return make_cuDoubleComplex(__fma_rn(-t.x, y.x, __fma_rn(t.y, y.y, x.x)),
                              __fma_rn(-t.x, y.y, __fma_rn(-t.y, y.x, x.y)));
}
__device__ __forceinline__ cuDoubleComplex div(cuDoubleComplex x, cuDoubleComplex d) {
  return cuCdiv(x, d);  // scaled: no overflow where the quotient is representable
}

// The power 2^k of an exponent in [-1022, 1023].
__device__ __forceinline__ double pow2(int k) {
  return __longlong_as_double(static_cast<long long>(k + 1023) << 52);
}
// v 2^e for |e| <= 1100, in two exact steps (2^e alone may not be a double).
__device__ __forceinline__ double scaled(double v, int e) {
  return __dmul_rn(__dmul_rn(v, pow2(e - e / 2)), pow2(e / 2));
}
__device__ __forceinline__ cuDoubleComplex scaled(cuDoubleComplex v, int e) {
  return make_cuDoubleComplex(scaled(v.x, e), scaled(v.y, e));
}
// The exponent e that brings the largest part of a finite, nonzero d into [1, 2) (0 otherwise).
__device__ __forceinline__ int unit_exponent(double m) {
  return m == 0.0 || !isfinite(m) ? 0 : -ilogb(m);
}
__device__ __forceinline__ int unit_exponent(cuDoubleComplex d) {
  return unit_exponent(fmax(fabs(d.x), fabs(d.y)));
}
// The unused triangle's element that holds the diagonal's exponent e_j (as a double): above the
// diagonal for a lower triangle (forward), below it for an upper one.
__device__ __forceinline__ int slot_row(int j, int n, bool forward) {
  return forward ? (j < n - 1 ? j : 0) : (j > 0 ? j : n - 1);
}
__device__ __forceinline__ int slot_col(int j, int n, bool forward) {
  return forward ? (j < n - 1 ? j + 1 : n - 1) : (j > 0 ? j - 1 : 0);
}
__device__ __forceinline__ double real_of(double v) { return v; }
__device__ __forceinline__ double real_of(cuDoubleComplex v) { return v.x; }
__device__ __forceinline__ void set_real(double* v, double r) { *v = r; }
__device__ __forceinline__ void set_real(cuDoubleComplex* v, double r) {
  *v = make_cuDoubleComplex(r, 0.0);
}

// The solve as each vector sees it: T y = alpha b with T (order x order) triangular, lower
// (forward substitution) or upper (backward). T_ij = op(A)_ij on the left, op(A)_ji on the
// right (X op(A) = B row by row is op(A)^T x = b): A's element (i, j), or (j, i) when `swap`,
// conjugated for A^H. Vector v's element i is at b + v vec_stride + i elem_stride.
struct solve_shape {
  int order;
  bool swap, forward;
  int64_t nvec, vec_stride, elem_stride;
};

// Rows of B per pass of the staged loads and stores (below).
constexpr int kPassRows = 16;

// Staged (the left side, where a vector is a column of B): B goes through shared memory
// kPassRows rows at a time, so that a warp reads and writes whole segments of each column
// instead of one element of each of 32 columns per instruction (H100, order 64 x 16384
// columns: 35 us with 16 rows a pass, 40 with 8, 49 unstaged; cuBLAS's TRSM 66). Unstaged (the
// right side): a vector is a row of B, and a warp's accesses are already contiguous.
template <class T, int N, bool Staged>
__global__ void __launch_bounds__(kThreads)
    small_trsm_kernel(small_trsm_args<T> x, solve_shape sh) {
  // t[i][j] = T_ij, zero outside the triangle and beyond the order. Then its diagonal holds
  // 1 / (T_jj 2^e_j) with e_j bringing T_jj's largest part into [1, 2), and e_j sits in the
  // unused triangle (slot_row, slot_col): x_j = (r_j / (T_jj 2^e_j)) 2^e_j is then a product by
  // a reciprocal (a call per division would spill x from registers) that neither overflows nor
  // loses bits where T_jj is subnormal or near the largest double.
  __shared__ T t[N][N];
  // The staged rows, column c of row i at c ^ i: no padding (it would take the block past 48 KB
  // of shared memory) and no bank conflicts on either side.
  __shared__ T stage[Staged ? kPassRows : 1][kThreads];
  const T zero = zero_of(x.alpha);
  for (int e = threadIdx.x; e < N * N; e += kThreads) {
    const int i = e % N, j = e / N;
    T v = zero;
    if (i < sh.order && j < sh.order && (sh.forward ? j <= i : j >= i)) {
      if (i == j && x.unit) {
        v = one_of(x.alpha);
      } else {
        const int64_t p = sh.swap ? j : i, q = sh.swap ? i : j;
        v = x.a[p + q * x.lda];
        if (x.conjugate) v = conj_of(v);
      }
    }
    t[i][j] = v;
  }
  __syncthreads();
  if (threadIdx.x < N && !x.unit) {
    const int j = threadIdx.x, e = unit_exponent(t[j][j]);
    t[j][j] = div(one_of(x.alpha), scaled(t[j][j], e));
    set_real(&t[slot_row(j, N, sh.forward)][slot_col(j, N, sh.forward)], e);
  }
  __syncthreads();
  const bool no_alpha = is_zero(x.alpha);
  // One vector per thread and no loop over vectors: in a loop the compiler would keep the
  // triangle's elements in registers across iterations, and spill.
  const int64_t v0 = static_cast<int64_t>(blockIdx.x) * kThreads, v = v0 + threadIdx.x;
  const bool mine = v < sh.nvec;
  if (!Staged && !mine) return;  // no barrier follows on this path
  T* const base = x.b + v * sh.vec_stride;
  T r[N];
  // Staged passes: rows [i0, i0 + kPassRows) of the block's columns; thread e of a pass moves
  // element e % kPassRows of column e / kPassRows.
  const auto pass_element = [&](int e, int i0, int64_t* at) {
    const int c = e / kPassRows, i = i0 + e % kPassRows;
    *at = (v0 + c) * sh.vec_stride + i;
    return v0 + c < sh.nvec && i < sh.order;
  };
  if (Staged) {
#pragma unroll
    for (int i0 = 0; i0 < N; i0 += kPassRows) {
      if (!no_alpha && i0 < sh.order)
        for (int e = threadIdx.x; e < kPassRows * kThreads; e += kThreads) {
          int64_t at = 0;
          if (pass_element(e, i0, &at))
            stage[e % kPassRows][(e / kPassRows) ^ (e % kPassRows)] = x.b[at];
        }
      __syncthreads();
#pragma unroll
      for (int i = 0; i < kPassRows; ++i)
        r[i0 + i] =
            i0 + i < sh.order && !no_alpha && mine ? mul(x.alpha, stage[i][threadIdx.x ^ i]) : zero;
      __syncthreads();
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      r[i] = i < sh.order && !no_alpha ? mul(x.alpha, base[i * sh.elem_stride]) : zero;
  }
  // x_j = (r_j / (T_jj 2^e_j)) 2^e_j, with the reciprocal and e_j set up above.
  const auto divide = [&](int j, bool forward) {
    const int e = static_cast<int>(real_of(t[slot_row(j, N, forward)][slot_col(j, N, forward)]));
    r[j] = scaled(mul(r[j], t[j][j]), e);
  };
  // alpha == 0: X = 0, B not read (BLAS). Column-oriented substitution: once x_j is known, it
  // leaves every later element's right-hand side (independent updates).
  if (!no_alpha && sh.forward) {
#pragma unroll
    for (int j = 0; j < N; ++j) {
      if (j < sh.order) {
        if (!x.unit) divide(j, true);
#pragma unroll
        for (int i = j + 1; i < N; ++i) r[i] = sub_mul(r[i], t[i][j], r[j]);
      }
    }
  } else if (!no_alpha) {
#pragma unroll
    for (int j = N - 1; j >= 0; --j) {
      if (j < sh.order) {
        if (!x.unit) divide(j, false);
#pragma unroll
        for (int i = 0; i < j; ++i) r[i] = sub_mul(r[i], t[i][j], r[j]);
      }
    }
  }
  if (Staged) {
#pragma unroll
    for (int i0 = 0; i0 < N; i0 += kPassRows) {
      if (i0 < sh.order) {
#pragma unroll
        for (int i = 0; i < kPassRows; ++i) stage[i][threadIdx.x ^ i] = r[i0 + i];
        __syncthreads();
        for (int e = threadIdx.x; e < kPassRows * kThreads; e += kThreads) {
          int64_t at = 0;
          if (pass_element(e, i0, &at))
            x.b[at] = stage[e % kPassRows][(e / kPassRows) ^ (e % kPassRows)];
        }
        __syncthreads();
      }
    }
  } else {  // an unstaged thread without a vector has returned
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (i < sh.order) base[i * sh.elem_stride] = r[i];
  }
}

template <class T>
cudaError_t launch(const small_trsm_args<T>& x, cudaStream_t stream) {
  constexpr int N = static_cast<int>(small_trsm_order<T>());
  const int64_t order = x.left ? x.m : x.n;
  if (order < 1 || order > N || x.m < 1 || x.n < 1) return cudaErrorInvalidValue;
  solve_shape sh{};
  sh.order = static_cast<int>(order);
  sh.swap = x.left ? x.transpose : !x.transpose;
  sh.forward = x.lower != sh.swap;  // T is lower
  sh.nvec = x.left ? x.n : x.m;
  sh.vec_stride = x.left ? x.ldb : 1;
  sh.elem_stride = x.left ? 1 : x.ldb;
  if (x.left)
    small_trsm_kernel<T, N, true><<<grid_dim(sh.nvec, kThreads), kThreads, 0, stream>>>(x, sh);
  else
    small_trsm_kernel<T, N, false><<<grid_dim(sh.nvec, kThreads), kThreads, 0, stream>>>(x, sh);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_small_trsm(const small_trsm_args<double>& x, cudaStream_t stream) {
  return launch(x, stream);
}
cudaError_t launch_small_trsm(const small_trsm_args<cuDoubleComplex>& x, cudaStream_t stream) {
  return launch(x, stream);
}

cudaError_t load_small_trsm_kernels() {
  constexpr int kReal = static_cast<int>(small_trsm_order<double>());
  constexpr int kComplex = static_cast<int>(small_trsm_order<cuDoubleComplex>());
  return load_kernels(small_trsm_kernel<double, kReal, true>,
                      small_trsm_kernel<double, kReal, false>,
                      small_trsm_kernel<cuDoubleComplex, kComplex, true>,
                      small_trsm_kernel<cuDoubleComplex, kComplex, false>);
}

}  // namespace ozdgemm::detail
