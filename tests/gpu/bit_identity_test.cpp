// The GPU pipeline equals the host reference bit for bit (NaN payloads aside) over shapes,
// ops, leading dimensions, alpha/beta, pointer modes, moduli counts, both scaling modes and
// adversarial inputs. The host reference itself is checked against exact and double-double
// references by the CPU tests, so identity here carries those guarantees to the GPU.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/gemm_problem.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.hpp"
#include "reference/host_reference.hpp"

namespace {

enum class input_kind { phi05, phi2, phi4, nonneg, scaled, zeros, subnormal, special, huge };

const char* kind_name(input_kind k) {
  switch (k) {
    case input_kind::phi05: return "phi05";
    case input_kind::phi2: return "phi2";
    case input_kind::phi4: return "phi4";
    case input_kind::nonneg: return "nonneg";
    case input_kind::scaled: return "scaled";
    case input_kind::zeros: return "zeros";
    case input_kind::subnormal: return "subnormal";
    case input_kind::special: return "infnan";
    case input_kind::huge: return "huge";
  }
  return "?";
}

struct gemm_case {
  int64_t m, n, k;
  char opa, opb;
  int64_t pad;  // added to every leading dimension
  double alpha, beta;
  int s;
  ozdgemm::scaling mode;
  input_kind kind;
  bool device_scalars;
  bool nan_in_c;

  std::string name() const {
    std::string r = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + "_" +
                    opa + opb + "_s" + std::to_string(s) +
                    (mode == ozdgemm::scaling::fast ? "_fast" : "_acc") + "_" + kind_name(kind) +
                    (device_scalars ? "_devptr" : "_hostptr");
    if (alpha == 0.0) r += "_alpha0";
    if (beta == 0.0) r += "_beta0";
    if (pad != 0) r += "_ldpad";
    return r;
  }
};

// Value of op(X)(v, l) for vector v (row of op(A) / column of op(B)) and index l.
double draw(input_kind kind, std::mt19937_64& g, int64_t v, int64_t l, bool is_a) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> nd;
  const double phi = kind == input_kind::phi2 ? 2.0 : kind == input_kind::phi4 ? 4.0 : 0.5;
  double x = (u(g) - 0.5) * std::exp(phi * nd(g));
  switch (kind) {
    case input_kind::nonneg: x = std::fabs(x); break;
    case input_kind::scaled:
      x = std::ldexp(x, is_a ? ((v % 3) - 1) * 300 : ((v % 3) - 1) * 40);
      break;
    case input_kind::zeros:
      if (v % 3 == 1) x = 0.0;
      break;
    case input_kind::subnormal:
      if (v % 2 == 0) x = std::ldexp(x, -1060);
      break;
    case input_kind::special:
      if (is_a && v == 1 && l == 0) x = INFINITY;
      if (is_a && v == 2 && l % 2 == 1) x = -INFINITY;
      if (!is_a && v == 1 && l == 0) x = NAN;
      if (!is_a && v == 2 && l == 0) x = 0.0;  // meets the Inf of row 1: Inf * 0
      break;
    case input_kind::huge: x = std::ldexp(x, 1000); break;
    default: break;
  }
  return x;
}

struct host_problem {
  std::vector<double> a, b, c;
  int64_t lda, ldb, ldc;
};

host_problem make_inputs(const gemm_case& tc, uint64_t seed) {
  std::mt19937_64 g(seed);
  host_problem h;
  const bool ta = tc.opa != 'N', tb = tc.opb != 'N';
  const int64_t rows_a = ta ? tc.k : tc.m, cols_a = ta ? tc.m : tc.k;
  const int64_t rows_b = tb ? tc.n : tc.k, cols_b = tb ? tc.k : tc.n;
  h.lda = rows_a + tc.pad;
  h.ldb = rows_b + tc.pad;
  h.ldc = tc.m + tc.pad;
  // Padding rows hold NaN: reading them would show up as a mismatch.
  h.a.assign(h.lda * cols_a, NAN);
  h.b.assign(h.ldb * cols_b, NAN);
  h.c.assign(h.ldc * tc.n, NAN);
  for (int64_t i = 0; i < tc.m; ++i)
    for (int64_t l = 0; l < tc.k; ++l)
      h.a[ta ? i * h.lda + l : l * h.lda + i] = draw(tc.kind, g, i, l, true);
  for (int64_t j = 0; j < tc.n; ++j)
    for (int64_t l = 0; l < tc.k; ++l)
      h.b[tb ? l * h.ldb + j : j * h.ldb + l] = draw(tc.kind, g, j, l, false);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t j = 0; j < tc.n; ++j)
    for (int64_t i = 0; i < tc.m; ++i) h.c[j * h.ldc + i] = tc.nan_in_c ? NAN : u(g);
  if (tc.alpha == 0.0) {  // A and B must not be read
    for (double& x : h.a) x = NAN;
    for (double& x : h.b) x = NAN;
  }
  return h;
}

cublasOperation_t to_op(char c) {
  return c == 'N' ? CUBLAS_OP_N : c == 'T' ? CUBLAS_OP_T : CUBLAS_OP_C;
}

class BitIdentity : public GpuTest, public ::testing::WithParamInterface<gemm_case> {};

TEST_P(BitIdentity, GpuEqualsHostReference) {
  const gemm_case tc = GetParam();
  host_problem h = make_inputs(tc, 1234 + tc.m * 7 + tc.n * 13 + tc.k * 17 + tc.s);

  // Host reference on a copy of C.
  std::vector<double> ref = h.c;
  const ozdgemm_options_t opts{tc.s, static_cast<ozdgemm_scaling_t>(tc.mode),
                               OZDGEMM_ACCURACY_NATIVE};
  ASSERT_EQ(ozdgemm_dgemm_reference(tc.opa, tc.opb, tc.m, tc.n, tc.k, tc.alpha, h.a.data(), h.lda,
                                    h.b.data(), h.ldb, tc.beta, ref.data(), h.ldc, opts),
            OZDGEMM_STATUS_SUCCESS);

  device_buffer<double> da(h.a), db(h.b), dc(h.c);
  device_buffer<double> dscal(std::vector<double>{tc.alpha, tc.beta});
  cudaStream_t stream;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ASSERT_CUBLAS(cublasSetStream(handle_, stream));
  if (tc.device_scalars) {
    ASSERT_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE));
  }
  const double* alpha = tc.device_scalars ? dscal.ptr : &tc.alpha;
  const double* beta = tc.device_scalars ? dscal.ptr + 1 : &tc.beta;
  ozdgemm::options o;
  o.num_moduli = tc.s;
  o.scaling = tc.mode;
  ASSERT_EQ(ozdgemm::dgemm(handle_, to_op(tc.opa), to_op(tc.opb), tc.m, tc.n, tc.k, alpha, da.ptr,
                           h.lda, db.ptr, h.ldb, beta, dc.ptr, h.ldc, o),
            OZDGEMM_STATUS_SUCCESS);
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  const std::vector<double> got = dc.to_host();

  // The handle is unchanged.
  cudaStream_t s_after;
  cublasPointerMode_t pm_after;
  ASSERT_CUBLAS(cublasGetStream(handle_, &s_after));
  ASSERT_CUBLAS(cublasGetPointerMode(handle_, &pm_after));
  EXPECT_EQ(s_after, stream);
  EXPECT_EQ(pm_after, tc.device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST);

  int64_t mismatches = 0;
  for (int64_t j = 0; j < tc.n; ++j)
    for (int64_t i = 0; i < tc.m + tc.pad; ++i) {
      const double g = got[j * h.ldc + i], r = ref[j * h.ldc + i];
      if (!same_bits(g, r)) {
        if (++mismatches <= 5)
          ADD_FAILURE() << "C(" << i << "," << j << "): gpu " << g << " host reference " << r;
      }
    }
  EXPECT_EQ(mismatches, 0) << "elements differing from the host reference (padding rows included)";
  ozdgemm_release_handle(handle_);
  cudaStreamDestroy(stream);
}

std::vector<gemm_case> cases() {
  std::vector<gemm_case> v;
  const int64_t shapes[][3] = {{1, 1, 1},    {1, 37, 53},  {29, 1, 64},
                               {17, 5, 33},  {64, 48, 80}, {130, 70, 300}};
  const char ops[][2] = {{'N', 'N'}, {'N', 'T'}, {'T', 'N'}, {'T', 'T'}, {'C', 'N'}, {'N', 'C'}};
  const input_kind kinds[] = {input_kind::phi05,     input_kind::phi2,    input_kind::phi4,
                              input_kind::nonneg,    input_kind::scaled,  input_kind::zeros,
                              input_kind::subnormal, input_kind::special, input_kind::huge};
  const double ab[][2] = {{1.0, 0.0}, {-1.5, 0.25}, {0.75, 1.0}};
  int idx = 0;
  for (ozdgemm::scaling mode : {ozdgemm::scaling::fast, ozdgemm::scaling::accurate})
    for (int s : {2, 8, 14, 20})
      for (int sh = 0; sh < 6; ++sh, ++idx) {
        gemm_case c{shapes[sh][0], shapes[sh][1], shapes[sh][2], ops[(sh + s) % 6][0],
                    ops[(sh + s) % 6][1], (idx % 3 == 0) ? 3 : 0, ab[idx % 3][0], ab[idx % 3][1],
                    s, mode, kinds[idx % 9], idx % 2 == 1, false};
        v.push_back(c);
      }
  // BLAS semantics, both pointer modes.
  for (bool dev : {false, true}) {
    v.push_back({33, 21, 40, 'N', 'T', 0, 0.0, 2.0, 14, ozdgemm::scaling::accurate,
                 input_kind::phi05, dev, false});  // alpha = 0: A, B (all NaN) not read
    v.push_back({33, 21, 40, 'T', 'N', 2, 2.0, 0.0, 14, ozdgemm::scaling::fast,
                 input_kind::phi2, dev, true});  // beta = 0: NaN in C does not leak
    v.push_back({40, 40, 64, 'N', 'N', 0, 1.0, 0.5, 16, ozdgemm::scaling::accurate,
                 input_kind::special, dev, false});
  }
  // The first and last s of every CRT limb count (limbs_for: s <= 4, 8, 12, 16, 20) that the
  // loop above leaves out; nonneg inputs put |X| near the CRT bound.
  for (int s : {4, 5, 9, 12, 13, 17}) {
    v.push_back({64, 48, 80, 'N', 'T', 0, 1.0, 0.0, s, ozdgemm::scaling::fast,
                 input_kind::nonneg, false, false});
    v.push_back({29, 37, 300, 'T', 'N', 1, -1.5, 0.25, s, ozdgemm::scaling::accurate,
                 input_kind::phi4, s % 2 == 1, false});
  }
  // k > 2^17: exact k-blocking (two and three blocks).
  v.push_back({3, 2, 131072 + 123, 'T', 'N', 0, 1.0, 0.0, 14, ozdgemm::scaling::fast,
               input_kind::phi05, false, false});
  v.push_back({3, 2, 131072 + 123, 'N', 'T', 1, -1.0, 0.5, 20, ozdgemm::scaling::accurate,
               input_kind::phi2, true, false});
  v.push_back({2, 3, 262144 + 40, 'N', 'N', 0, 1.0, 0.0, 18, ozdgemm::scaling::accurate,
               input_kind::nonneg, false, false});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, BitIdentity, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<gemm_case>& i) { return i.param.name(); });

}  // namespace
