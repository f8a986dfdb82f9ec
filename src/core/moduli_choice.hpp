// Automatic moduli count: predict the error of the emulated DGEMM for each candidate s from
// per-vector statistics of the scaling pass, and pick the smallest s that meets a target.
// docs/accuracy.md derives the bound and justifies the targets; this file is its code.
//
// The prediction. For row i of op(A) with shift e_i and column j of op(B) with shift f_j,
// the truncation error of the exactly recovered product obeys (docs/accuracy.md, eq. 1)
//   |X_ij 2^-(e_i+f_j) - (AB)_ij| <= 2^-e_i ||b_j||_1 + 2^-f_j ||a_i||_1 + k 2^-(e_i+f_j),
// half that (a quarter for the last term) when the residues round to nearest.
// Measured against (|A||B|)_ij = sum_l |a_il||b_lj|, the first term is 2^-e_i over a
// |b|-weighted mean of |a_il|. Per-vector statistics cannot know the weights; the model
// replaces that mean by the geometric mean of the row's nonzero magnitudes times its density,
// G_i nnz_i / k. It is below the arithmetic mean ||a_i||_1 / k, and it falls with the
// exponent spread of the row as fast as the worst weighted means do (a heavy-tailed b_j puts
// its weight on one random l, where |a_il| is typically near G_i, not near the mean). Then
//   eps_ij = r_i + c_j + r_i c_j,   r_i = k 2^-e_i / (nnz_i G_i),   c_j likewise,
// and the worst element needs two scalars per s: max_i r_i and max_j c_j.
//
// Statistics. G_i enters through 2^(sum_l exponent_of(a_il) / nnz_i) <= G_i (exponent_of
// is floor(log2 |a|)), so the statistic never makes r_i smaller: an exact integer sum and a
// count per vector. The exponents for every s come from s-independent statistics: in fast
// mode e_i(s) is a function of (emax_i, Q_i, L(s)) alone (scaling_rules.hpp), so one pass
// gives the exponents for all s; in accurate mode they are a function of U (s-independent)
// and L(s), recomputed per s in O(m n) (see docs/auto.md for the device plan).
//
// Host-only: the device reduces the statistics and this code chooses.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/element.hpp"
#include "core/moduli_setting.hpp"
#include "core/scaling_rules.hpp"

namespace ozdgemm::detail {

enum class accuracy_kind {
  native,  // predicted truncation error no worse than native DGEMM's typical error
  max,     // as close to correctly rounded as 20 moduli allow
  bits,    // predicted truncation error <= 2^-bits (|A||B|)_ij
};

struct accuracy_target {
  accuracy_kind kind = accuracy_kind::native;
  int bits = 0;  // for accuracy_kind::bits, in [1, 200]
  // For accuracy_kind::native: the bound divided by 2^native_shift (a complex call's certified
  // count, complex_target() in core/complex_embedding.hpp).
  int native_shift = 0;
  // For accuracy_kind::native on the host path (host_target()): native is a CPU BLAS, and the
  // bound is 2^-53 (|A||B|)_ij, without the sqrt(k) (below).
  bool cpu_blas = false;
};

// "native", "max" or a number of bits (1..200); false for anything else.
bool parse_accuracy_target(const std::string& text, accuracy_target* out);
std::string accuracy_target_name(const accuracy_target& t);

// The s-independent per-vector statistics (rows of op(A) or columns of op(B)).
struct vector_stats_for_choice {
  std::vector<int> emax;           // exponent_of(max |x_l|), kZeroExponent for a zero vector
  std::vector<int64_t> exp_sum;    // sum of exponent_of(x_l) over nonzero finite x_l
  std::vector<int64_t> nnz;        // number of nonzero finite x_l
  std::vector<uint8_t> flags;      // non-finite classes (such vectors are recomputed in FP64)
};

// max over vectors of k 2^-e_v / (nnz_v 2^(exp_sum_v / nnz_v)) (the r_i or c_j above); 0
// when every vector is zero or flagged.
double worst_truncation_ratio(int64_t k, const vector_stats_for_choice& st,
                              const std::vector<int>& exps);

// eps(s) from the worst row ratio r and worst column ratio c at s, depth k: r + c + r c when
// the residues of s truncate; (r + c) / 2 + r c / 4 when they round to nearest
// (rounds_to_nearest(moduli_for(s), k): |alpha_l| <= 1/2 in eq. 1). The one place that decides
// the rounding for the model, shared by the device chooser and the host reference.
double combine_ratios(double r, double c, int s, int64_t k);

// The target as a bound on eps: native: kNativeFactor sqrt(k) 2^-53 (the probabilistic
// bound of FP64 summation, lambda = 1; calibrated in docs/accuracy.md); bits: 2^-bits;
// max: handled by choose_moduli (needs eps(20)).
inline constexpr double kNativeFactor = 1.0;
double target_bound(const accuracy_target& t, int64_t k);

// A host call's target (host_path/offload.cpp): `native` there means no worse than the CPU
// BLAS it replaces. A CPU BLAS sums each dot product in a few long FMA chains, and its
// realised error stays near u (|A||B|)_ij on data of mixed signs at any k (pip NumPy's
// OpenBLAS: 0.53 u at 8192^3), far below the sqrt(k) u that the GPU's native DGEMM reaches (its
// realised error at 16384^3 on the same kind of data: 4.9 u, docs/accuracy.md). At native's
// GPU bound a host call's error was 2.9x NumPy's own; u itself is the host bound. Other targets
// are unchanged.
accuracy_target host_target(const accuracy_target& t);

// A complex call's certified count meets a quarter of native's bound on its embedded real
// problem (native_shift 2). At native's bound itself its relative error on uniform and phi = 0.5
// complex data was 1.1-6.6x native ZGEMM's at some element (tests/cpu: n = 384 to 640; the
// H200: 1.4-3.3x from n = 2048 to 16384, bench/results/zgemm/), where DGEMM's stayed below
// native's: native ZGEMM's realised error sits further below its bound. A quarter moved every
// such call up one modulus and left the others (docs/complex.md section 2). Other targets and
// the automatic count are unchanged.
inline constexpr int kComplexCertifiedShift = 2;
accuracy_target complex_target(const accuracy_target& t, const moduli_setting& moduli);

// The target of a host call (host_path/offload.cpp and CI's stand-in for it): host_target, and
// for a complex (embedded) call complex_target's quarter of it.
accuracy_target host_call_target(const accuracy_target& t, const moduli_setting& moduli,
                                 bool complex);

struct moduli_choice {
  int s = 0;               // chosen moduli count; 0: no s in [2, 20] meets the target
  double predicted = 0.0;  // eps(s) (eps(20) when s == 0)
  double target = 0.0;     // the bound eps had to meet
  std::string why;         // one line for the log when s == 0
  // s == 0 because the device's choice gave up waiting for the stream (engine/emulate.hpp),
  // not because no s meets the target.
  bool waited_out = false;
  // A per-call choice ran to its outcome on the host (s or 0 as above): false for a fixed count,
  // a count chosen on the GPU, and a choice that waited out or could not run.
  bool made = false;
  // s != 0 was chosen, but the caller's moduli_gate declined to run it: nothing touched C.
  bool gated = false;
};

// A caller's say on the count a per-call choice returned, asked once the choice is made and
// before anything touches C: auto mode runs the native routine instead when the performance
// model predicts the emulation at that count slower (dispatch/decision.hpp).
class moduli_gate {
 public:
  virtual bool runs(int s) const = 0;

 protected:
  ~moduli_gate() = default;
};

// Smallest s in [kMinModuli, kMaxModuli] with eps(s) <= target, given eps as a function of s
// (non-increasing in s: every shift grows with L(s)). `max` takes the smallest s with
// eps(s) <= max(eps(20), 2^-75), and falls back only when eps(20) exceeds the native target.
moduli_choice choose_moduli(const accuracy_target& t, int64_t k,
                            const std::function<double(int)>& eps_of_s);

// Fast-mode exponents for s from the scaling statistics (emax, Q = sum q_l^2): the same
// function the scaling pass applies, so they equal the exponents it would produce for s.
std::vector<int> fast_exponents_for(const std::vector<int>& emax,
                                    const std::vector<uint64_t>& sum_q2, int s);

}  // namespace ozdgemm::detail
