// The tiled plane writer (kernels/planes.cuh) byte for byte against the host definitions:
// launch_residues against scale_to_int + int8_residue (both roundings), launch_bound_quantize
// against bound_quantize, the band planes (alone, with the residues, and mirrored over the
// Karatsuba form's B*) against magnitude_band, for both operand layouts, sizes that leave
// partial tiles in both directions, a leading dimension larger than the vector, and the zero
// padding. The end-to-end bit-identity tests cover these kernels too; this one says which plane
// and byte went wrong.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "certify.cuh"
#include "core/certified_bound.hpp"
#include "core/element.hpp"
#include "core/gemm_problem.hpp"
#include "core/moduli.hpp"
#include "core/scaling_rules.hpp"
#include "gpu_fixture.hpp"
#include "residues.cuh"
#include "scaling.cuh"

namespace ozdgemm::test {
namespace {

using detail::operand;
using detail::round_up;

struct shape {
  int64_t nvec, k;
  bool k_contiguous;
};

struct host_operand {
  std::vector<double> data;
  int64_t ld;
  operand view(const double* dev) const { return operand{dev, ld, k_contiguous}; }
  bool k_contiguous;
  double at(int64_t v, int64_t l) const {
    return k_contiguous ? data[v * ld + l] : data[l * ld + v];
  }
};

// Values over many binades with zeros and both signs; ld exceeds the vector extent by 3.
host_operand make_operand(const shape& sh, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> g(0.0, 4.0);
  host_operand h;
  h.k_contiguous = sh.k_contiguous;
  h.ld = (sh.k_contiguous ? sh.k : sh.nvec) + 3;
  h.data.assign(static_cast<size_t>(h.ld * (sh.k_contiguous ? sh.nvec : sh.k)), 0.0);
  for (double& x : h.data) x = rng() % 17 == 0 ? 0.0 : std::ldexp(u(rng), static_cast<int>(g(rng)));
  return h;
}

// Per vector: its top exponent (encoded, 0 for a zero vector), a scale exponent and a band
// drop, the statistics the band writers read. drop_of(v) stays in band_drop's range (a few
// binades below emax).
struct vector_stats {
  std::vector<int> emax_enc, exps, drop;
};

template <class DropOf>
vector_stats stats_of(const host_operand& h, int64_t nvec, int64_t k, DropOf drop_of) {
  vector_stats st;
  st.emax_enc.assign(static_cast<size_t>(nvec), 0);
  st.exps = st.drop = st.emax_enc;
  for (int64_t v = 0; v < nvec; ++v) {
    int emax = detail::kZeroExponent;
    for (int64_t l = 0; l < k; ++l) {
      const int ex = detail::exponent_of(h.at(v, l));
      emax = ex > emax ? ex : emax;
    }
    if (emax == detail::kZeroExponent) continue;
    st.emax_enc[v] = emax + detail::kExponentBias;
    st.exps[v] = static_cast<int>(30 + v % 40) - emax - 1;
    st.drop[v] = drop_of(v);
  }
  return st;
}

class PlaneWriter : public GpuTest, public ::testing::WithParamInterface<shape> {};

TEST_P(PlaneWriter, ResiduesMatchHostByteForByte) {
  const shape sh = GetParam();
  const host_operand h = make_operand(sh, 11 + sh.nvec * 7 + sh.k);
  const int64_t nvec_pad = round_up(sh.nvec, detail::kPad), k_pad = round_up(sh.k, detail::kPad);
  // Exponents the scaling could produce: |x| 2^e < 2^(bits) with bits up to 77, varied per vector.
  std::vector<int> exps(static_cast<size_t>(sh.nvec));
  for (int64_t v = 0; v < sh.nvec; ++v) {
    int emax = detail::kZeroExponent;
    for (int64_t l = 0; l < sh.k; ++l) {
      const int e = detail::exponent_of(h.at(v, l));
      emax = e > emax ? e : emax;
    }
    exps[v] = emax == detail::kZeroExponent ? 0 : static_cast<int>(20 + v % 58) - emax - 1;
  }
  device_buffer<double> x(h.data);
  device_buffer<int> e(exps);
  for (int s : {2, 14, 20}) {
    const detail::modulus_table& tb = detail::moduli_for(s);
    // Both roundings at every s: the writer takes the flag as it comes.
    const bool nearest = s != 20;
    const size_t plane = static_cast<size_t>(nvec_pad * k_pad);
    device_buffer<int8_t> out(s * plane);
    ASSERT_CUDA(cudaMemset(out.ptr, 0x5A, s * plane));  // padding must be written, not left
    detail::launch_residues({h.view(x.ptr), sh.nvec, sh.k, nullptr, nvec_pad, k_pad}, e.ptr, tb,
                            nearest, out.ptr, nullptr);
    ASSERT_CUDA(cudaGetLastError());
    ASSERT_CUDA(cudaDeviceSynchronize());
    const std::vector<int8_t> got = out.to_host();
    int64_t bad = 0;
    for (int t = 0; t < s; ++t)
      for (int64_t v = 0; v < nvec_pad; ++v)
        for (int64_t l = 0; l < k_pad; ++l) {
          int8_t want = 0;
          if (v < sh.nvec && l < sh.k)
            want = detail::int8_residue(detail::scale_to_int(h.at(v, l), exps[v], nearest), tb, t);
          const int8_t g = got[t * plane + v * k_pad + l];
          if (g != want && ++bad <= 5)
            ADD_FAILURE() << "s=" << s << " plane " << t << " v=" << v << " l=" << l << ": want "
                          << int(want) << " got " << int(g);
        }
    EXPECT_EQ(bad, 0) << "s=" << s;
  }
}

TEST_P(PlaneWriter, BoundPlaneMatchesHostByteForByte) {
  const shape sh = GetParam();
  const host_operand h = make_operand(sh, 3 + sh.nvec + sh.k * 5);
  const int64_t nvec_pad = round_up(sh.nvec, detail::kPad), k_pad = round_up(sh.k, detail::kPad);
  const std::vector<int> emax_enc = stats_of(h, sh.nvec, sh.k, [](int64_t) { return 0; }).emax_enc;
  device_buffer<double> x(h.data);
  device_buffer<int> enc(emax_enc);
  const size_t plane = static_cast<size_t>(nvec_pad * k_pad);
  device_buffer<int8_t> out(plane);
  ASSERT_CUDA(cudaMemset(out.ptr, 0x5A, plane));
  detail::launch_bound_quantize({h.view(x.ptr), sh.nvec, sh.k, nullptr, nvec_pad, k_pad}, enc.ptr,
                                out.ptr, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<int8_t> got = out.to_host();
  int64_t bad = 0;
  for (int64_t v = 0; v < nvec_pad; ++v)
    for (int64_t l = 0; l < k_pad; ++l) {
      int8_t want = 0;
      if (v < sh.nvec && l < sh.k && emax_enc[v] != 0)
        want = detail::bound_quantize(h.at(v, l), emax_enc[v] - detail::kExponentBias);
      const int8_t g = got[v * k_pad + l];
      if (g != want && ++bad <= 5)
        ADD_FAILURE() << "v=" << v << " l=" << l << ": want " << int(want) << " got " << int(g);
    }
  EXPECT_EQ(bad, 0);
}

// The residue pass that also writes the certificate's band planes (a speculated count's):
// its residue planes equal launch_residues', and both its band planes and launch_band_planes'
// equal the host's magnitude codes (magnitude_band from the top emax - drop).
TEST_P(PlaneWriter, ResiduesAndBandsMatchHostByteForByte) {
  const shape sh = GetParam();
  const host_operand h = make_operand(sh, 5 + sh.nvec * 3 + sh.k);
  const int64_t nvec_pad = round_up(sh.nvec, detail::kPad), k_pad = round_up(sh.k, detail::kPad);
  const vector_stats st =
      stats_of(h, sh.nvec, sh.k, [](int64_t v) { return static_cast<int>(v % 9); });
  const std::vector<int>& emax_enc = st.emax_enc;
  const std::vector<int>& drop = st.drop;
  device_buffer<double> x(h.data);
  device_buffer<int> enc(emax_enc), e(st.exps), dr(drop);
  const detail::modulus_table& tb = detail::moduli_for(15);
  const size_t plane = static_cast<size_t>(nvec_pad * k_pad);
  const size_t band_bytes = detail::kCertBands * plane;
  device_buffer<int8_t> res(tb.s * plane), fused(tb.s * plane), bands(band_bytes),
      fused_bands(band_bytes);
  for (int8_t* p : {res.ptr, fused.ptr}) ASSERT_CUDA(cudaMemset(p, 0x5A, tb.s * plane));
  for (int8_t* p : {bands.ptr, fused_bands.ptr}) ASSERT_CUDA(cudaMemset(p, 0x5A, band_bytes));
  const detail::operand_vectors ov{h.view(x.ptr), sh.nvec, sh.k, nullptr, nvec_pad, k_pad};
  detail::launch_residues(ov, e.ptr, tb, true, res.ptr, nullptr);
  detail::launch_band_planes(ov, enc.ptr, dr.ptr, bands.ptr, nullptr);
  detail::launch_residues_and_bands(ov, e.ptr, tb, true, enc.ptr, dr.ptr, fused.ptr,
                                    fused_bands.ptr, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(fused.to_host() == res.to_host()) << "the fused pass's residue planes differ";
  const std::vector<int8_t> got_fused = fused_bands.to_host(), got_alone = bands.to_host();
  int64_t bad = 0;
  for (int d = 0; d < detail::kCertBands; ++d)
    for (int64_t v = 0; v < nvec_pad; ++v)
      for (int64_t l = 0; l < k_pad; ++l) {
        int want = 0;
        if (v < sh.nvec && l < sh.k && emax_enc[v] != 0) {
          const int top = emax_enc[v] - detail::kExponentBias - drop[v];
          const detail::band_code bc = detail::magnitude_band(h.at(v, l), top);
          if (bc.code != 0 && bc.band == d) want = bc.code;
        }
        const size_t at = d * plane + v * k_pad + l;
        if ((got_fused[at] != want || got_alone[at] != want) && ++bad <= 5)
          ADD_FAILURE() << "band " << d << " v=" << v << " l=" << l << ": want " << want
                        << " fused " << int(got_fused[at]) << " alone " << int(got_alone[at]);
      }
  EXPECT_EQ(bad, 0);
}

// The Karatsuba form's B* (core/complex_embedding.hpp): the residue pass covers the first half
// of each of its 2n' columns, and with the mirror writes each run's band codes also at the
// partner column (j + n' or j - n') and depth l + k'. Its band planes must equal those
// launch_band_planes writes over the whole embedding, byte for byte (every byte written: both
// buffers start as 0x5A), and its residue planes those of launch_residues over the first halves.
TEST_P(PlaneWriter, MirroredBandsCoverTheWholeEmbedding) {
  const shape sh = GetParam();  // the complex B: sh.k x sh.nvec
  const int64_t kh = round_up(sh.k, detail::kPad), nh = round_up(sh.nvec, detail::kPad);
  const int64_t nvec = 2 * nh, k = 2 * kh;  // the embedding's columns and depth, padded already
  std::mt19937_64 rng(11 + sh.nvec + sh.k);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> g(0.0, 4.0);
  auto draw = [&] { return rng() % 17 == 0 ? 0.0 : std::ldexp(u(rng), static_cast<int>(g(rng))); };
  std::vector<double> re(static_cast<size_t>(sh.k * sh.nvec)), im(re.size());
  for (size_t i = 0; i < re.size(); ++i) {
    re[i] = draw();
    im[i] = draw();
  }
  host_operand h;
  h.k_contiguous = sh.k_contiguous;
  h.ld = (sh.k_contiguous ? k : nvec) + 3;
  h.data.assign(static_cast<size_t>(h.ld * (sh.k_contiguous ? nvec : k)), 0.0);
  // B* = [[Re B, Im B], [-Im B, Re B]]: column j < n' is (Re B_j; -Im B_j), column j + n' is
  // (Im B_j; Re B_j); zeros in the padding of each half.
  for (int64_t v = 0; v < nvec; ++v)
    for (int64_t l = 0; l < k; ++l) {
      const int64_t j = v % nh, d = l % kh;
      if (j >= sh.nvec || d >= sh.k) continue;
      const double r = re[j * sh.k + d], i = im[j * sh.k + d];
      const double x = v < nh ? (l < kh ? r : -i) : (l < kh ? i : r);
      h.data[sh.k_contiguous ? v * h.ld + l : l * h.ld + v] = x;
    }
  // A column and its partner: the same statistics.
  const vector_stats st =
      stats_of(h, nvec, k, [nh](int64_t v) { return static_cast<int>((v % nh) % 9); });
  device_buffer<double> x(h.data);
  device_buffer<int> enc(st.emax_enc), e(st.exps), dr(st.drop);
  const detail::modulus_table& tb = detail::moduli_for(15);
  const size_t plane = static_cast<size_t>(nvec * k);
  const size_t band_bytes = detail::kCertBands * plane;
  device_buffer<int8_t> res(tb.s * plane), fused(tb.s * plane), bands(band_bytes),
      fused_bands(band_bytes);
  for (int8_t* p : {res.ptr, fused.ptr}) ASSERT_CUDA(cudaMemset(p, 0x5A, tb.s * plane));
  for (int8_t* p : {bands.ptr, fused_bands.ptr}) ASSERT_CUDA(cudaMemset(p, 0x5A, band_bytes));
  const detail::operand_vectors whole{h.view(x.ptr), nvec, k, nullptr, nvec, k};
  detail::operand_vectors halves = whole;
  halves.k = halves.k_written = kh;
  detail::launch_residues(halves, e.ptr, tb, true, res.ptr, nullptr);
  detail::launch_band_planes(whole, enc.ptr, dr.ptr, bands.ptr, nullptr);
  detail::launch_residues_and_bands(halves, e.ptr, tb, true, enc.ptr, dr.ptr, fused.ptr,
                                    fused_bands.ptr, nullptr, detail::karatsuba_halves{kh, nh});
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(fused.to_host() == res.to_host()) << "the fused pass's residue planes differ";
  const std::vector<int8_t> got = fused_bands.to_host(), want = bands.to_host();
  int64_t bad = 0, nonzero = 0;
  for (size_t at = 0; at < band_bytes; ++at) {
    nonzero += want[at] != 0;
    if (got[at] != want[at] && ++bad <= 5)
      ADD_FAILURE() << "byte " << at << " (v=" << (at % plane) / k << " l=" << at % k << "): want "
                    << int(want[at]) << " got " << int(got[at]);
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(nonzero, 0) << "no codes to compare";
}

// The suite of this file: GpuTest (skips without a device, one cuBLAS handle per test).
class PlaneWriterAlpha : public GpuTest {};

// alpha == 0 on the device: the operand must not be read and every plane is zero.
TEST_F(PlaneWriterAlpha, WritesZerosWhenAlphaIsZero) {
  const shape sh{37, 200, false};
  const int64_t nvec_pad = round_up(sh.nvec, detail::kPad), k_pad = round_up(sh.k, detail::kPad);
  const detail::modulus_table& tb = detail::moduli_for(14);
  const size_t plane = static_cast<size_t>(nvec_pad * k_pad);
  device_buffer<int8_t> out(tb.s * plane);
  device_buffer<int> e(std::vector<int>(sh.nvec, 40));
  device_buffer<double> alpha(std::vector<double>{0.0});
  ASSERT_CUDA(cudaMemset(out.ptr, 0x5A, tb.s * plane));
  // A null operand pointer: any read would fault.
  detail::launch_residues(
      {operand{nullptr, sh.nvec, false}, sh.nvec, sh.k, alpha.ptr, nvec_pad, k_pad}, e.ptr, tb,
      true, out.ptr, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_CUDA(cudaDeviceSynchronize());
  for (int8_t b : out.to_host()) ASSERT_EQ(b, 0);
}

INSTANTIATE_TEST_SUITE_P(Shapes, PlaneWriter,
                         ::testing::Values(shape{1, 1, true}, shape{1, 1, false},
                                           shape{45, 300, true}, shape{45, 300, false},
                                           shape{70, 129, true}, shape{70, 129, false},
                                           shape{33, 1000, true}, shape{130, 16, false},
                                           shape{200, 520, true}, shape{200, 520, false}),
                         [](const ::testing::TestParamInfo<shape>& i) {
                           return "n" + std::to_string(i.param.nvec) + "_k" +
                                  std::to_string(i.param.k) +
                                  (i.param.k_contiguous ? "_kcontig" : "_veccontig");
                         });

}  // namespace
}  // namespace ozdgemm::test
