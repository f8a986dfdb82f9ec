// Inputs and accuracy for the benchmarks.
//
// Inputs are generated on the GPU: entry (U - 0.5) exp(phi N(0,1)), U uniform in (0,1), from a
// counter-based generator, so the data depend only on (seed, copy, matrix, index) and not on
// the launch configuration. phi sets the exponent spread (the Ozaki papers' test matrices).
//
// Accuracy: a double-double reference (Ogita-Rump-Oishi Dot2: TwoProd by fma, TwoSum) for a
// sample of (i, j) positions, computed on the host from the sampled rows of A and columns of
// B; the errors are max |C - R| / |R| and max |C - R| / (|A||B|) over the sample.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench_cuda.hpp"

namespace ozdgemm::bench {

struct shape {
  int64_t m, n, k;
};

// 2 m n k.
inline double gemm_flops(const shape& sh) { return 2.0 * double(sh.m) * double(sh.n) * double(sh.k); }

// Bytes of one operand set A, B, C in FP64.
inline double set_bytes(const shape& sh) {
  return 8.0 * (double(sh.m) * double(sh.k) + double(sh.k) * double(sh.n) +
                double(sh.m) * double(sh.n));
}

// One set of operands, column-major with lda = m, ldb = k, ldc = m.
struct input_set {
  device_array<double> a, b, c;
};

// Allocates and fills input set `copy` (C zeroed), enqueued on `stream`.
input_set make_input_set(const shape& sh, uint64_t seed, int copy, double phi,
                         cudaStream_t stream);

// Number of input sets to rotate through: one unless a set is small enough to stay in L2.
// With n sets, a set is reused only after n - 1 others (>= 3 L2 of data) were streamed, so
// every timed call reads its operands from HBM as a large problem would.
int copies_for(const shape& sh, size_t l2_bytes, int max_copies);

struct sample_ref {
  double value;    // C_ij to about 2^-106 relative to (|A||B|)_ij
  double abs_dot;  // (|A||B|)_ij
};

// Dot2 of x and y (length len) and the dot product of their magnitudes.
sample_ref dot2(const double* x, const double* y, int64_t len);

struct samples {
  std::vector<int64_t> i, j;
  device_array<int64_t> d_i, d_j;
  device_array<double> d_out;
  std::vector<sample_ref> ref;
};

// `count` random positions (fixed by `seed`) and their reference values for input set `in`.
samples make_samples(const shape& sh, const input_set& in, int count, uint64_t seed,
                     cudaStream_t stream);

// The sampled entries of C (ldc = m), after the stream's pending work.
std::vector<double> read_samples(const shape& sh, const double* c, samples& s,
                                 cudaStream_t stream);

struct errors {
  double max_rel = kNaN;     // max |C - R| / |R|
  double max_scaled = kNaN;  // max |C - R| / (|A||B|)
};

// NaN in `c` (an entry the method did not write) makes both maxima NaN.
errors sampled_errors(const std::vector<double>& c, const std::vector<sample_ref>& ref);

}  // namespace ozdgemm::bench
