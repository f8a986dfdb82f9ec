// The H200 sweep that auto mode's performance model is held to: the full side-by-side sweep at
// 58bc1ab (bench/results/speed/bench.csv, cuBLASLt backend, phi = 0.5 and 4, s = 14, 15, 16,
// 18, both scaling modes, n >= 2048). These are recorded measurements, not outputs of the code
// under test: the check pins the promise the model makes, with the H200's prior rates (a CPU
// test) or with the rates calibration measures on an H200 (a GPU test).
//   safety:  where emulation measured no faster than native, auto picks native;
//   utility: where emulation measured at least 20% faster, auto picks emulation.
// Between the two the model may go either way (it is conservative by design: it misses some
// gains of 10-20%, never picks a slower emulation on these shapes).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "dispatch/decision.hpp"
#include "dispatch/gpu_rates.hpp"
#include "dispatch/settings.hpp"

namespace ozdgemm::test {

// The prior rates of the published GPU whose name `name` matches (gpu_rates.cpp's table): its
// published peaks times the efficiencies measured on the H200.
inline detail::gpu_rates published_prior(const char* name) {
  detail::gpu_identity id;
  id.name = name;
  id.cc_major = 9;
  const detail::gpu_spec* spec = detail::find_published(id);
  if (spec == nullptr) ADD_FAILURE() << "no published GPU matches " << name;
  return spec != nullptr ? detail::prior_rates(*spec) : detail::gpu_rates{};
}
inline detail::gpu_rates h200_prior() { return published_prior("NVIDIA H200"); }

struct sweep_point {
  int64_t m, n, k;
  int s;
  bool accurate;
  double native_ms, emulated_ms;  // medians of the same run
};

inline constexpr sweep_point kSweep58bc1ab[] = {
    {2048, 2048, 2048, 14, false, 0.287, 0.434},         // phi 0.5
    {2048, 2048, 2048, 15, false, 0.287, 0.462},         // phi 0.5
    {2048, 2048, 2048, 16, false, 0.287, 0.482},         // phi 0.5
    {2048, 2048, 2048, 18, false, 0.287, 0.537},         // phi 0.5
    {2048, 2048, 2048, 14, true, 0.287, 0.572},          // phi 0.5
    {2048, 2048, 2048, 15, true, 0.287, 0.599},          // phi 0.5
    {2048, 2048, 2048, 16, true, 0.287, 0.618},          // phi 0.5
    {2048, 2048, 2048, 18, true, 0.287, 0.672},          // phi 0.5
    {4096, 4096, 4096, 14, false, 2.402, 2.442},         // phi 0.5
    {4096, 4096, 4096, 15, false, 2.402, 2.417},         // phi 0.5
    {4096, 4096, 4096, 16, false, 2.402, 2.585},         // phi 0.5
    {4096, 4096, 4096, 18, false, 2.402, 2.980},         // phi 0.5
    {4096, 4096, 4096, 14, true, 2.402, 2.642},          // phi 0.5
    {4096, 4096, 4096, 15, true, 2.402, 2.725},          // phi 0.5
    {4096, 4096, 4096, 16, true, 2.402, 2.827},          // phi 0.5
    {4096, 4096, 4096, 18, true, 2.402, 3.227},          // phi 0.5
    {8192, 8192, 8192, 14, false, 19.485, 15.086},       // phi 0.5
    {8192, 8192, 8192, 15, false, 19.485, 16.666},       // phi 0.5
    {8192, 8192, 8192, 16, false, 19.485, 17.234},       // phi 0.5
    {8192, 8192, 8192, 18, false, 19.485, 19.544},       // phi 0.5
    {8192, 8192, 8192, 14, true, 19.485, 16.680},        // phi 0.5
    {8192, 8192, 8192, 15, true, 19.485, 17.614},        // phi 0.5
    {8192, 8192, 8192, 16, true, 19.485, 18.627},        // phi 0.5
    {8192, 8192, 8192, 18, true, 19.485, 20.062},        // phi 0.5
    {16384, 16384, 16384, 14, false, 164.539, 102.024},  // phi 0.5
    {16384, 16384, 16384, 15, false, 164.539, 110.084},  // phi 0.5
    {16384, 16384, 16384, 16, false, 164.539, 115.425},  // phi 0.5
    {16384, 16384, 16384, 18, false, 164.539, 129.331},  // phi 0.5
    {16384, 16384, 16384, 14, true, 164.539, 110.867},   // phi 0.5
    {16384, 16384, 16384, 15, true, 164.539, 117.614},   // phi 0.5
    {16384, 16384, 16384, 16, true, 164.539, 124.182},   // phi 0.5
    {16384, 16384, 16384, 18, true, 164.539, 137.325},   // phi 0.5
    {16384, 16384, 4096, 14, false, 39.527, 30.762},     // phi 0.5
    {16384, 16384, 4096, 15, false, 39.527, 33.547},     // phi 0.5
    {16384, 16384, 4096, 16, false, 39.527, 35.517},     // phi 0.5
    {16384, 16384, 4096, 18, false, 39.527, 39.349},     // phi 0.5
    {16384, 16384, 4096, 14, true, 39.527, 34.039},      // phi 0.5
    {16384, 16384, 4096, 15, true, 39.527, 36.101},      // phi 0.5
    {16384, 16384, 4096, 16, true, 39.527, 38.060},      // phi 0.5
    {16384, 16384, 4096, 18, true, 39.527, 42.609},      // phi 0.5
    {4096, 4096, 65536, 14, false, 40.422, 28.875},      // phi 0.5
    {4096, 4096, 65536, 15, false, 40.422, 31.163},      // phi 0.5
    {4096, 4096, 65536, 16, false, 40.422, 33.422},      // phi 0.5
    {4096, 4096, 65536, 18, false, 40.422, 36.507},      // phi 0.5
    {4096, 4096, 65536, 14, true, 40.422, 31.398},       // phi 0.5
    {4096, 4096, 65536, 15, true, 40.422, 33.183},       // phi 0.5
    {4096, 4096, 65536, 16, true, 40.422, 34.990},       // phi 0.5
    {4096, 4096, 65536, 18, true, 40.422, 38.382},       // phi 0.5
    {2048, 2048, 262144, 14, false, 39.776, 46.643},     // phi 0.5
    {2048, 2048, 262144, 15, false, 39.776, 49.135},     // phi 0.5
    {2048, 2048, 262144, 16, false, 39.776, 52.932},     // phi 0.5
    {2048, 2048, 262144, 18, false, 39.776, 60.001},     // phi 0.5
    {2048, 2048, 262144, 14, true, 39.776, 41.659},      // phi 0.5
    {2048, 2048, 262144, 15, true, 39.776, 43.640},      // phi 0.5
    {2048, 2048, 262144, 16, true, 39.776, 46.007},      // phi 0.5
    {2048, 2048, 262144, 18, true, 39.776, 50.854},      // phi 0.5
    {4096, 4096, 4096, 14, false, 2.494, 2.261},         // phi 4
    {4096, 4096, 4096, 15, false, 2.494, 2.365},         // phi 4
    {4096, 4096, 4096, 16, false, 2.494, 2.647},         // phi 4
    {4096, 4096, 4096, 18, false, 2.494, 2.922},         // phi 4
    {4096, 4096, 4096, 14, true, 2.494, 2.623},          // phi 4
    {4096, 4096, 4096, 15, true, 2.494, 2.688},          // phi 4
    {4096, 4096, 4096, 16, true, 2.494, 2.781},          // phi 4
    {4096, 4096, 4096, 18, true, 2.494, 3.220},          // phi 4
    {8192, 8192, 8192, 14, false, 19.793, 14.871},       // phi 4
    {8192, 8192, 8192, 15, false, 19.793, 16.251},       // phi 4
    {8192, 8192, 8192, 16, false, 19.793, 17.286},       // phi 4
    {8192, 8192, 8192, 18, false, 19.793, 20.080},       // phi 4
    {8192, 8192, 8192, 14, true, 19.793, 16.509},        // phi 4
    {8192, 8192, 8192, 15, true, 19.793, 17.301},        // phi 4
    {8192, 8192, 8192, 16, true, 19.793, 18.452},        // phi 4
    {8192, 8192, 8192, 18, true, 19.793, 19.898},        // phi 4
    {16384, 16384, 16384, 14, false, 166.539, 102.307},  // phi 4
    {16384, 16384, 16384, 15, false, 166.539, 107.974},  // phi 4
    {16384, 16384, 16384, 16, false, 166.539, 114.600},  // phi 4
    {16384, 16384, 16384, 18, false, 166.539, 128.223},  // phi 4
    {16384, 16384, 16384, 14, true, 166.539, 106.418},   // phi 4
    {16384, 16384, 16384, 15, true, 166.539, 116.133},   // phi 4
    {16384, 16384, 16384, 16, true, 166.539, 120.657},   // phi 4
    {16384, 16384, 16384, 18, true, 166.539, 135.650},   // phi 4
};

// The check above for these rates; the number of shapes emulated comes back.
inline int expect_sweep_decisions(const detail::gpu_rates& h200) {
  const detail::config cfg{};  // auto mode, 5% margin, OZDGEMM_MIN_DIM 256
  EXPECT_EQ(cfg.mode, detail::run_mode::automatic);
  int emulated = 0;
  for (const sweep_point& r : kSweep58bc1ab) {
    const detail::scaling_mode mode =
        r.accurate ? detail::scaling_mode::accurate : detail::scaling_mode::fast;
    detail::config c = cfg;
    c.moduli = detail::moduli_setting::fixed(r.s);
    c.scaling = mode;
    const detail::route d =
        detail::decide_route(c, detail::call_site::device, nullptr, r.m, r.n, r.k, false, h200);
    const detail::prediction& p = d.predicted;
    const double speedup = r.native_ms / r.emulated_ms;
    SCOPED_TRACE(testing::Message()
                 << r.m << "x" << r.n << "x" << r.k << " s=" << r.s
                 << (r.accurate ? " accurate" : " fast") << ": measured " << speedup << "x, model "
                 << p.native_ms << " / " << p.emulated_ms << " ms");
    if (speedup <= 1.0) {
      EXPECT_FALSE(d.emulate) << "emulation measured no faster";
    }
    if (speedup >= 1.25) {
      EXPECT_TRUE(d.emulate) << "emulation measured >= 20% less time";
    }
    if (d.emulate) {  // it does not promise more than was measured (5% for noise)
      EXPECT_GE(p.emulated_ms / p.native_ms, 0.95 * r.emulated_ms / r.native_ms);
    }
    emulated += d.emulate;
  }
  return emulated;
}

}  // namespace ozdgemm::test
