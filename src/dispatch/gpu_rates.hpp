// The rates the performance model needs, per GPU. They come from the GPU the library runs on:
// measured once per GPU model (dispatch/calibration.hpp), or, before that or without it, a
// prior from the GPU's published peak rates. The table below holds those peaks; the prior is
// peak x the efficiency the library's own pipeline reached on an H200, where it was measured
// (docs/gpus.md), so that the H200's prior is the H200's measured model.
#pragma once

#include <cstdint>
#include <string>

namespace ozdgemm::detail {

// What the model needs to know of one GPU and its host.
struct gpu_rates {
  double fp64 = 0;       // native DGEMM, flop/s
  double int8 = 0;       // INT8 GEMMs, operations/s (2 per multiply-add)
  double prep_bw = 0;    // bytes/s of the scaling and residue passes
  double crt_bw = 0;     // bytes/s of the reduction and CRT pass
  double host_link = 0;  // pinned host <-> device bytes/s, per direction
  double cpu_blas = 0;   // the host's BLAS, flop/s (host-memory calls)
  std::string source;    // where they come from, for the log ("published: ...", "calibrated")
};

// A GPU as the library identifies it (cudaGetDeviceProperties / cudaDeviceGetAttribute).
struct gpu_identity {
  std::string name;  // "NVIDIA H200", "NVIDIA GeForce RTX 4090", ...
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double sm_clock_hz = 0;  // peak
  double mem_bw = 0;       // peak bytes/s from the memory clock and bus width; 0: unknown
};

// Published peak rates of one GPU model (dense: no structured sparsity).
struct gpu_spec {
  const char* pattern;  // matched against the device name as a whole word ("H20" is not "H200")
  const char* label;    // for logs and docs
  int cc_major, cc_minor;
  double fp64;       // FP64 peak (tensor cores where the GPU has FP64 tensor cores), flop/s
  double int8;       // INT8 tensor-core peak, dense, ops/s
  double mem_bw;     // device memory, bytes/s
  double host_link;  // host link per direction, bytes/s (PCIe gen4 32e9, gen5 64e9, C2C 450e9)
};

// The table's entry for this GPU, or null for a GPU it does not know (then
// architecture_rates() estimates one from the SM count and clock).
const gpu_spec* find_published(const gpu_identity& id);

// The prior of a known GPU: its peaks x the pipeline's efficiencies measured on the H200.
gpu_rates prior_rates(const gpu_spec& spec);

// An estimate for a GPU the table does not know, from its SM count and clock and the
// per-SM, per-clock rates of its architecture; an empty source when the architecture is not
// known either (then auto mode keeps such a GPU native until it is calibrated).
gpu_rates architecture_rates(const gpu_identity& id);

// The prior for any GPU: the table's, else the architecture's.
gpu_rates prior_for(const gpu_identity& id);

// Calibrated rates held to what the GPU can do: each within [prior / 4, 2 x prior] (outside
// that range a measurement is implausible: a GPU busy with other work, throttled, or a timing
// fault), else the prior's value. A rate the prior does not know (0) is taken as measured.
// *clamped (may be null) names the rates that were replaced.
gpu_rates bounded_calibration(const gpu_rates& measured, const gpu_rates& prior,
                              std::string* clamped);

// Calibrated rates as the model uses them: the emulation's side (INT8, the preparation and CRT
// passes, the host link) at kCalibrationMargin of what was measured, FP64 and the CPU BLAS as
// measured, so that the model stays on native's side as the prior does. Calibration times a few
// small problems, best of three, on one day; the calls it decides run at full size on others: on
// an H200, rates calibrated at 692bfad put the emulation's predicted speed-ups 5-8% above the
// recorded sweep's at 8192^3 and predicted a gain where the sweep measured 0.997x.
inline constexpr double kCalibrationMargin = 0.9;
gpu_rates with_margin(const gpu_rates& measured);

// The whole table, for tests and docs.
struct published_table {
  const gpu_spec* begin;
  const gpu_spec* end;
};
published_table published_gpus();

}  // namespace ozdgemm::detail
