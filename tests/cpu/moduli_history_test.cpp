// Auto mode prices a per-call choice at the counts it returned for the same shape
// (engine/moduli_history.hpp, dispatch/decision.hpp): the history itself, and the decisions it
// leads to with the H200's prior rates, on the shapes the fixed estimate got wrong
// (bench/results/auto_mode/README.md: DGEMM 8192^3 and cublasZgemm3m 16384^3 kept native).
#include "engine/moduli_history.hpp"

#include <gtest/gtest.h>

#include <string>

#include "dispatch/decision.hpp"
#include "dispatch/gpu_rates.hpp"
#include "support/h200_sweep.hpp"

namespace ozdgemm::test {
namespace {

using detail::history_key;
using detail::moduli_history;
using detail::moduli_outlook;
using detail::scaling_mode;

history_key shape(int64_t n, bool complex = false, scaling_mode mode = scaling_mode::fast) {
  return history_key{n, n, n, complex, mode};
}

TEST(ModuliHistory, KeepsTheLatestOutcomesPerShape) {
  moduli_history h;
  EXPECT_EQ(h.lookup(shape(4096)).shape.total, 0u);
  EXPECT_EQ(h.shapes(), 0u) << "a lookup stores nothing";
  for (int i = 0; i < moduli_history::kWindow; ++i) h.record(shape(4096), 17);
  for (int i = 0; i < 3; ++i) h.record(shape(4096), 14);
  h.record(shape(4096), 0);
  const detail::count_tally o = h.lookup(shape(4096)).shape;
  EXPECT_EQ(o.total, static_cast<uint32_t>(moduli_history::kWindow));
  EXPECT_EQ(o.counts[14], 3u);
  EXPECT_EQ(o.counts[0], 1u);
  EXPECT_EQ(o.counts[17], static_cast<uint32_t>(moduli_history::kWindow) - 4u);
}

TEST(ModuliHistory, ShapesFamiliesAndScalingsAreKeptApart) {
  moduli_history h;
  h.record(shape(4096), 14);
  h.record(shape(4096, true), 15);
  h.record(shape(4096, false, scaling_mode::accurate), 13);
  h.record(history_key{4096, 4096, 2048, false, scaling_mode::fast}, 16);
  EXPECT_EQ(h.lookup(shape(4096)).shape.counts[14], 1u);
  EXPECT_EQ(h.lookup(shape(4096, true)).shape.counts[15], 1u);
  EXPECT_EQ(h.lookup(shape(4096, false, scaling_mode::accurate)).shape.counts[13], 1u);
  EXPECT_EQ(h.lookup(history_key{4096, 4096, 2048, false, scaling_mode::fast}).shape.counts[16],
            1u);
  EXPECT_EQ(h.lookup(shape(4096)).shape.total, 1u);
}

// What an eager certified call launches before its certificate is known (engine/speculation.hpp):
// nothing before the shape's first outcome (the host chooses), then the largest recent count; after
// an outcome of no count, native, with every kProbeEvery-th call certifying its data beside it.
TEST(ModuliHistory, SpeculatesTheLargestRecentCountAndProbesAfterNone) {
  moduli_history h;
  detail::speculation sp = h.speculate(shape(4096));
  EXPECT_EQ(sp.launch, 0);
  EXPECT_FALSE(sp.native);
  EXPECT_EQ(h.shapes(), 0u) << "speculating stores nothing";
  h.record(shape(4096), 15);
  EXPECT_EQ(h.speculate(shape(4096)).launch, 15);
  h.record(shape(4096), 17);
  h.record(shape(4096), 14);
  EXPECT_EQ(h.speculate(shape(4096)).launch, 17) << "the largest of the window, not the latest";
  EXPECT_EQ(h.speculate(shape(4096, true)).launch, 0) << "complex calls have their own counts";
  EXPECT_EQ(h.speculate(history_key{4096, 4096, 4096, false, scaling_mode::fast, 53}).launch, 0)
      << "another accuracy target has its own counts";
  for (int i = 0; i < moduli_history::kWindow; ++i) h.record(shape(4096), 14);
  EXPECT_EQ(h.speculate(shape(4096)).launch, 14) << "older counts leave the window";
  h.record(shape(4096), 0);
  int probes = 0;
  for (uint32_t i = 1; i <= 3 * moduli_history::kProbeEvery; ++i) {
    sp = h.speculate(shape(4096));
    EXPECT_EQ(sp.launch, 0);
    EXPECT_TRUE(sp.native);
    EXPECT_EQ(sp.probe, i % moduli_history::kProbeEvery == 0) << "call " << i;
    probes += sp.probe;
  }
  EXPECT_EQ(probes, 3);
  h.record(shape(4096), 16);  // a probe found a count again
  sp = h.speculate(shape(4096));
  EXPECT_FALSE(sp.native);
  EXPECT_EQ(sp.launch, 16);
}

TEST(ModuliHistory, ComplexCallsAreKeptUnderTheirEmbedding) {
  const history_key z = detail::key_of_call(1000, 300, 200, true, scaling_mode::fast, 0);
  EXPECT_EQ(z.m, 1000);
  EXPECT_EQ(z.n, 600);
  EXPECT_EQ(z.k, 400);
  EXPECT_TRUE(z.complex);
  const history_key d = detail::key_of_call(1000, 300, 200, false, scaling_mode::fast, 0);
  EXPECT_EQ(d.n, 300);
  EXPECT_EQ(d.k, 200);
  EXPECT_FALSE(d == z);
}

TEST(ModuliHistory, FamiliesCollectTheLatestOutcomesOfEveryShape) {
  moduli_history h;
  h.record(shape(4096), 14);
  h.record(shape(8192), 17);
  h.record(shape(4096, true), 15);
  const moduli_outlook o = h.lookup(shape(2048));
  EXPECT_EQ(o.shape.total, 0u);
  EXPECT_EQ(o.family.total, 2u);
  EXPECT_EQ(o.family.counts[14], 1u);
  EXPECT_EQ(o.family.counts[17], 1u);
  EXPECT_EQ(h.lookup(shape(2048, true)).family.counts[15], 1u) << "complex calls apart";
  EXPECT_EQ(h.lookup(shape(2048, false, scaling_mode::accurate)).family.total, 0u);
  for (int i = 0; i < moduli_history::kFamilyWindow; ++i) h.record(shape(100 + i), 16);
  const detail::count_tally f = h.lookup(shape(2048)).family;
  EXPECT_EQ(f.total, static_cast<uint32_t>(moduli_history::kFamilyWindow));
  EXPECT_EQ(f.counts[16], static_cast<uint32_t>(moduli_history::kFamilyWindow)) << "the latest";
}

TEST(ModuliHistory, IgnoresCountsTheHostDidNotLearn) {
  moduli_history h;
  for (int s : {-1, 1, 21, 255}) h.record(shape(512), s);
  EXPECT_EQ(h.shapes(), 0u);
  h.record(shape(512), detail::kMinModuli);
  h.record(shape(512), detail::kMaxModuli);
  EXPECT_EQ(h.lookup(shape(512)).shape.total, 2u);
}

TEST(ModuliHistory, ClearForgetsShapesAndFamilies) {
  moduli_history h;
  h.record(shape(1024), 16);
  h.record(shape(2048, true), 17);
  ASSERT_EQ(h.speculate(shape(1024)).launch, 16);
  h.clear();
  EXPECT_EQ(h.shapes(), 0u);
  EXPECT_EQ(h.lookup(shape(1024)).family.total, 0u);
  EXPECT_EQ(h.lookup(shape(2048, true)).family.total, 0u);
  EXPECT_EQ(h.speculate(shape(1024)).launch, 0) << "a shape's first call chooses on the host";
  h.record(shape(1024), 14);
  EXPECT_EQ(h.speculate(shape(1024)).launch, 14);
}

TEST(ModuliHistory, CountsDecidedCallsSinceTheLastOutcome) {
  moduli_history h;
  h.record(shape(8192), 18);
  EXPECT_EQ(h.lookup(shape(8192)).decided_since, 1u);
  EXPECT_EQ(h.lookup(shape(8192)).decided_since, 2u);
  h.record(shape(8192), 18);
  EXPECT_EQ(h.lookup(shape(8192)).decided_since, 1u);
}

TEST(ModuliHistory, IsBoundedAndDropsTheLeastRecentlyUsedShape) {
  moduli_history h;
  for (size_t i = 0; i < moduli_history::kMaxShapes; ++i)
    h.record(shape(static_cast<int64_t>(1000 + i)), 15);
  (void)h.lookup(shape(1000));  // the oldest record, but used now
  h.record(shape(1), 14);       // one more shape: the least recently used (1001) goes
  EXPECT_EQ(h.shapes(), moduli_history::kMaxShapes);
  EXPECT_EQ(h.lookup(shape(1000)).shape.total, 1u);
  EXPECT_EQ(h.lookup(shape(1001)).shape.total, 0u);
  EXPECT_EQ(h.lookup(shape(1)).shape.counts[14], 1u);
}

detail::config auto_certified() {
  detail::config c;
  c.mode = detail::run_mode::automatic;
  c.moduli = detail::moduli_setting::certified();
  c.scaling = scaling_mode::fast;
  return c;
}

moduli_outlook seen(std::initializer_list<int> counts, uint32_t decided_since = 1) {
  moduli_outlook o;
  for (int s : counts) ++o.shape.counts[s];
  o.shape.total = static_cast<uint32_t>(counts.size());
  o.decided_since = decided_since;
  return o;
}

detail::route device_route(int64_t n, const moduli_outlook* o, const detail::gpu_rates& r,
                           const detail::config& c = auto_certified()) {
  return detail::decide_route(c, detail::call_site::device, nullptr, n, n, n, true, r, 1.0, false,
                              o);
}

// DGEMM 8192^3 on the H200: native 19.7-20.0 ms measured, the certified call 17.9 ms at s = 14
// and 21.3 ms at s = 17 (bench/results/default/README.md, runs 5 and 8), before the certificate
// became cheaper (run 15). The model prices it at 19.3 ms native, 1.5 ms for the choice and
// 15.8 ms for the emulation at s = 14: 17.2 ms, 12% faster, so s = 14 pays with the default
// margin of 5% too; priced at the fixed estimate of 16 moduli it does not (no margin at all).
TEST(AutoModelUsesTheChosenCount, Dgemm8192FollowsTheCountsItsDataReturned) {
  const detail::gpu_rates r = h200_prior();
  detail::config no_margin = auto_certified();
  no_margin.auto_margin = 0.0;
  const detail::route prior = device_route(8192, nullptr, r, no_margin);
  ASSERT_FALSE(prior.emulate) << "the fixed estimate: " << prior.predicted.emulated_ms << " ms";
  EXPECT_FALSE(prior.gate.active());

  // No count seen yet: tried once, with the gate on.
  const moduli_outlook none;
  const detail::route first = device_route(8192, &none, r, no_margin);
  EXPECT_TRUE(first.emulate) << first.reason;
  EXPECT_EQ(std::string(first.reason), "auto: trying the choice (no count seen for this shape)");
  ASSERT_TRUE(first.gate.active());
  EXPECT_TRUE(first.gate.runs(14))
      << first.gate.emulated_ms(14) << " ms against native " << first.predicted.native_ms;
  EXPECT_FALSE(first.gate.runs(20));

  const moduli_outlook low = seen({14, 14, 14, 14});
  const detail::route fast = device_route(8192, &low, r, no_margin);
  EXPECT_TRUE(fast.emulate) << fast.reason;
  EXPECT_LT(fast.predicted.emulated_ms, fast.predicted.native_ms);
  EXPECT_GT(fast.predicted.emulated_ms, fast.gate.emulated_ms(14)) << "the choice is not free";
  // With the default margin the same counts pay too, and a new shape is tried.
  EXPECT_TRUE(device_route(8192, &low, r).emulate);
  EXPECT_TRUE(device_route(8192, &none, r).emulate);

  // Counts that lose to native (or no count at all) keep the shape native...
  for (const moduli_outlook& o : {seen({19, 20, 19}), seen({0, 0})}) {
    const detail::route slow = device_route(8192, &o, r, no_margin);
    EXPECT_FALSE(slow.emulate) << slow.reason << " " << slow.predicted.emulated_ms;
    EXPECT_GT(slow.predicted.emulated_ms, slow.predicted.native_ms);
  }
  // ... but for a retry every kRetryEvery decided calls.
  const moduli_outlook due = seen({0, 0}, detail::kRetryEvery);
  const detail::route retry = device_route(8192, &due, r, no_margin);
  EXPECT_TRUE(retry.emulate);
  EXPECT_TRUE(retry.gate.active());
}

// DGEMM 16384^3: the fixed estimate emulates whatever the data; at the counts wide-range data
// returns (18 and up, where the emulation no longer beats native) the model keeps it native.
TEST(AutoModelUsesTheChosenCount, Dgemm16384GoesNativeAtHighCounts) {
  const detail::gpu_rates r = h200_prior();
  ASSERT_TRUE(device_route(16384, nullptr, r).emulate);
  const moduli_outlook typical = seen({15, 15, 17});
  EXPECT_TRUE(device_route(16384, &typical, r).emulate);
  const moduli_outlook wide = seen({19, 20, 0});
  const detail::route rt = device_route(16384, &wide, r);
  EXPECT_FALSE(rt.emulate) << rt.predicted.emulated_ms << " ms against " << rt.predicted.native_ms;
  const moduli_outlook none;
  EXPECT_FALSE(device_route(16384, &none, r).gate.runs(20));
}

// A shape with no count of its own is priced at its family's counts (a program's data mostly
// keeps its character from one shape to the next), and is not tried on a hunch where they say
// native.
TEST(AutoModelUsesTheChosenCount, NewShapesArePricedAtTheirFamilysCounts) {
  const detail::gpu_rates r = h200_prior();
  detail::config no_margin = auto_certified();
  no_margin.auto_margin = 0.0;
  moduli_outlook low;
  low.family = seen({14, 14, 15}).shape;
  const detail::route fast = device_route(8192, &low, r, no_margin);
  EXPECT_TRUE(fast.emulate);
  EXPECT_EQ(std::string(fast.reason),
            "auto: model predicts emulation faster at other shapes' recent counts");
  EXPECT_TRUE(fast.gate.active());
  moduli_outlook high;
  high.family = seen({19, 20, 0}).shape;
  for (int64_t n : {8192, 16384}) {
    const detail::route slow = device_route(n, &high, r, no_margin);
    EXPECT_FALSE(slow.emulate) << n << ": " << slow.reason;
    EXPECT_EQ(std::string(slow.reason),
              "auto: model predicts native faster at other shapes' recent counts");
  }
  // The shape's own counts win over the family's.
  moduli_outlook own = seen({14, 14});
  own.family = high.family;
  EXPECT_TRUE(device_route(8192, &own, r, no_margin).emulate);
}

// The gate is monotone in s: the emulation's time grows with s, the native time does not.
TEST(AutoModelUsesTheChosenCount, TheGateRunsTheSmallCountsOnly) {
  const detail::gpu_rates r = h200_prior();
  int gated = 0;  // routes that carried a gate: the loop must check at least one
  for (int64_t n : {4096, 8192, 16384}) {
    const moduli_outlook none;
    const detail::route rt = device_route(n, &none, r);
    if (!rt.gate.active()) continue;
    ++gated;
    bool seen_decline = false;
    for (int s = detail::kMinModuli; s <= detail::kMaxModuli; ++s) {
      if (!rt.gate.runs(s))
        seen_decline = true;
      else
        EXPECT_FALSE(seen_decline)
            << "n = " << n << " runs s = " << s << " after a smaller declined";
    }
  }
  EXPECT_GT(gated, 0) << "no route carried a gate: the check above ran on nothing";
}

// A call whose count is chosen on the GPU runs whatever it chooses: not tried on a hunch, and
// its counts priced as they run.
TEST(AutoModelUsesTheChosenCount, ChoicesOnTheGpuAreNotTriedOnAHunch) {
  const detail::gpu_rates r = h200_prior();
  moduli_outlook none;
  none.host_choice = false;
  EXPECT_FALSE(device_route(8192, &none, r).emulate);
  moduli_outlook high = seen({20, 20});
  const detail::route with_gate = device_route(8192, &high, r);
  high.host_choice = false;
  const detail::route ungated = device_route(8192, &high, r);
  EXPECT_FALSE(ungated.emulate);
  EXPECT_GT(ungated.predicted.emulated_ms, with_gate.predicted.emulated_ms)
      << "an s = 20 chosen on the GPU runs at its own time, above native's";
}

// Fixed counts and OZDGEMM_MODE=emulate: the user's choice, no gate.
TEST(AutoModelUsesTheChosenCount, NoGateOutsideAutoModeOrForAFixedCount) {
  const detail::gpu_rates r = h200_prior();
  const moduli_outlook o = seen({14});
  detail::config fixed = auto_certified();
  fixed.moduli = detail::moduli_setting::fixed(15);
  EXPECT_FALSE(device_route(16384, &o, r, fixed).gate.active());
  detail::config emulate = auto_certified();
  emulate.mode = detail::run_mode::emulate;
  const detail::route forced = device_route(2048, &o, r, emulate);
  EXPECT_TRUE(forced.emulate);
  EXPECT_FALSE(forced.gate.active());
}

// Complex calls on the H200 (bench/results/auto_mode/README.md and zgemm/README.md; the Karatsuba
// form of the m x 2n x 2k embedding, certified count s = 15 on the bench's data):
//   cublasZgemm3m 16384^3: 633.8 ms native, the emulation 396.8 ms: emulate;
//   cublasZgemm3m 8192^3: 79.8 ms native, the emulation 61.2 ms: emulate (0.77x);
//   cublasZgemm 4096^3: 9.43 ms native, the certified emulation 7.86 ms (PyTorch, 56c4128,
//   bench/results/default run 16; 1.17x in run 11): emulate, and no faster than measured.
TEST(AutoModelUsesTheChosenCount, ComplexCallsAtTheirCountsAndNativeRates) {
  const detail::gpu_rates r = h200_prior();
  const moduli_outlook o = seen({15, 15, 15});
  const auto complex_route = [&](int64_t n, double native_work) {
    return detail::decide_route(auto_certified(), detail::call_site::device, nullptr, n, 2 * n,
                                2 * n, true, r, native_work, true, &o);
  };
  for (int64_t n : {8192, 16384}) {
    const detail::route rt = complex_route(n, detail::kZgemm3mNativeWork);
    EXPECT_TRUE(rt.emulate) << "3m, n = " << n << ": " << rt.predicted.emulated_ms << " ms against "
                            << rt.predicted.native_ms;
  }
  const detail::route z4096 = complex_route(4096, detail::kZgemmNativeWork);
  EXPECT_TRUE(z4096.emulate) << z4096.predicted.emulated_ms << " ms against "
                             << z4096.predicted.native_ms;
  EXPECT_GE(z4096.predicted.emulated_ms / z4096.predicted.native_ms, 0.95 * 7.86 / 9.43);
  // The native times the model takes: no slower than measured (it favours native).
  EXPECT_LE(complex_route(8192, detail::kZgemm3mNativeWork).predicted.native_ms, 79.8);
  EXPECT_LE(complex_route(8192, detail::kZgemmNativeWork).predicted.native_ms, 92.5);
  EXPECT_LE(complex_route(4096, detail::kZgemmNativeWork).predicted.native_ms, 10.79);
}

// Host calls: priced at their counts, never tried on a hunch (their choice is not gated).
TEST(AutoModelUsesTheChosenCount, HostCallsArePricedAtTheirCounts) {
  const detail::gpu_rates r = h200_prior();
  moduli_outlook none;
  none.host_choice = false;
  moduli_outlook low = seen({14, 14});
  low.host_choice = false;
  moduli_outlook high = seen({20, 20});
  high.host_choice = false;
  const auto host = [&](const moduli_outlook& o) {
    return detail::decide_route(auto_certified(), detail::call_site::host, nullptr, 8192, 8192,
                                8192, true, r, 1.0, false, &o);
  };
  EXPECT_LT(host(low).predicted.emulated_ms, host(none).predicted.emulated_ms);
  EXPECT_GT(host(high).predicted.emulated_ms, host(none).predicted.emulated_ms);
  EXPECT_EQ(std::string(host(none).reason).find("trying"), std::string::npos) << host(none).reason;
}

}  // namespace
}  // namespace ozdgemm::test
