#include "dispatch/gpu_rates.hpp"

#include <cctype>
#include <cstring>
#include <iterator>

namespace ozdgemm::detail {
namespace {

// Published peaks, dense (no structured sparsity). FP64: the tensor-core rate where the GPU
// has FP64 tensor cores, else the FP64 units' (1/64 of FP32 on the GeForce, RTX and L-series
// parts, which the vendors derive rather than print). The host link: PCIe gen4 x16 32e9,
// gen5 x16 64e9 per direction, NVLink-C2C 450e9. Where a vendor gives only a sparse INT8 or
// FP4 rate, the dense INT8 rate is derived from it (half the sparse INT8; a quarter of the
// sparse FP4). More specific patterns come first: the first whole-word match wins.
constexpr gpu_spec kTable[] = {
    // Ampere
    {"A100", "A100", 8, 0, 19.5e12, 624e12, 1.935e12, 32e9},
    {"A30", "A30", 8, 0, 10.3e12, 330e12, 0.933e12, 32e9},
    {"RTX 3090", "GeForce RTX 3090", 8, 6, 0.556e12, 284e12, 0.936e12, 32e9},
    // Ada
    {"RTX 4090", "GeForce RTX 4090", 8, 9, 1.29e12, 660.6e12, 1.008e12, 32e9},
    {"RTX 6000 Ada", "RTX 6000 Ada", 8, 9, 1.42e12, 728.5e12, 0.96e12, 32e9},
    {"L40S", "L40S", 8, 9, 1.43e12, 733e12, 0.864e12, 32e9},
    {"L40", "L40", 8, 9, 1.41e12, 362e12, 0.864e12, 32e9},
    {"L4", "L4", 8, 9, 0.47e12, 242e12, 0.3e12, 32e9},
    // Hopper
    {"GH200", "GH200", 9, 0, 67e12, 1979e12, 4.0e12, 450e9},
    {"H200 NVL", "H200 NVL", 9, 0, 60e12, 1670e12, 4.8e12, 64e9},
    {"H200", "H200", 9, 0, 67e12, 1979e12, 4.8e12, 64e9},
    {"H100 PCIe", "H100 PCIe", 9, 0, 51e12, 1513e12, 2.0e12, 64e9},
    {"H100 NVL", "H100 NVL", 9, 0, 60e12, 1670e12, 3.9e12, 64e9},
    {"H100", "H100 SXM", 9, 0, 67e12, 1979e12, 3.35e12, 64e9},
    {"H20", "H20", 9, 0, 1.0e12, 296e12, 4.0e12, 64e9},
    // Blackwell
    {"GB200", "GB200", 10, 0, 45e12, 5.0e15, 8.0e12, 450e9},
    {"B200", "B200", 10, 0, 40e12, 4.5e15, 8.0e12, 64e9},
    {"GB300", "GB300", 10, 3, 1.25e12, 0.15e15, 8.0e12, 450e9},
    {"B300", "B300", 10, 3, 1.25e12, 0.15e15, 8.0e12, 64e9},
    {"RTX PRO 6000", "RTX PRO 6000 Blackwell", 12, 0, 1.95e12, 1000e12, 1.792e12, 64e9},
    {"RTX 5090", "GeForce RTX 5090", 12, 0, 1.64e12, 838e12, 1.792e12, 64e9},
    {"RTX 5080", "GeForce RTX 5080", 12, 0, 0.88e12, 450e12, 0.96e12, 64e9},
    {"GB10", "GB10", 12, 1, 0.4e12, 250e12, 0.273e12, 450e9},
};

// What the pipeline reached on an H200 (bench/results/speed/README.md, the model's rates)
// against that GPU's peaks: native DGEMM 57e12 of 67e12, the INT8 GEMMs 1.35e15 of 1.979e15,
// the scaling and residue passes 2.1e12 and the CRT pass 2.3e12 bytes/s of 4.8e12, pinned
// transfers of host-path tiles 20e9 of 64e9 bytes/s.
constexpr double kFp64Efficiency = 57.0 / 67.0;
constexpr double kInt8Efficiency = 1.35 / 1.979;
constexpr double kPrepEfficiency = 2.1 / 4.8;
constexpr double kCrtEfficiency = 2.3 / 4.8;
constexpr double kLinkEfficiency = 20.0 / 64.0;
// The host's BLAS: generous on purpose (it decides host calls against the GPU, and a CPU
// faster than this would keep more calls at home); not measured.
constexpr double kCpuBlas = 1.0e11;

// `pattern` in `name` as whole words: no letter or digit right before or after it.
bool whole_word(const std::string& name, const char* pattern) {
  const size_t len = std::strlen(pattern);
  for (size_t at = name.find(pattern); at != std::string::npos; at = name.find(pattern, at + 1)) {
    const bool left = at == 0 || !std::isalnum(static_cast<unsigned char>(name[at - 1]));
    const bool right =
        at + len == name.size() || !std::isalnum(static_cast<unsigned char>(name[at + len]));
    if (left && right) return true;
  }
  return false;
}

// Per SM and clock, dense, by architecture: FP64 flop (tensor cores on 8.0, 9.0, 10.0; the
// FP64 units elsewhere) and INT8 tensor-core operations, derived from the table's GPUs.
struct per_sm {
  int cc_major, cc_minor;
  double fp64, int8;
};
constexpr per_sm kArchitectures[] = {
    {8, 0, 128, 4096},   {8, 6, 4, 2048}, {8, 7, 4, 2048},  {8, 9, 4, 2048},  {9, 0, 256, 8192},
    {10, 0, 128, 16384}, {10, 3, 4, 512}, {12, 0, 4, 2048}, {12, 1, 4, 2048},
};

}  // namespace

const gpu_spec* find_published(const gpu_identity& id) {
  for (const gpu_spec& s : kTable)
    if (s.cc_major == id.cc_major && whole_word(id.name, s.pattern)) return &s;
  return nullptr;
}

gpu_rates prior_rates(const gpu_spec& s) {
  gpu_rates r;
  r.fp64 = s.fp64 * kFp64Efficiency;
  r.int8 = s.int8 * kInt8Efficiency;
  r.prep_bw = s.mem_bw * kPrepEfficiency;
  r.crt_bw = s.mem_bw * kCrtEfficiency;
  r.host_link = s.host_link * kLinkEfficiency;
  r.cpu_blas = kCpuBlas;
  r.source = std::string("published peaks of the ") + s.label;
  return r;
}

gpu_rates architecture_rates(const gpu_identity& id) {
  gpu_rates r;
  r.cpu_blas = kCpuBlas;
  for (const per_sm& a : kArchitectures) {
    if (a.cc_major != id.cc_major || a.cc_minor != id.cc_minor) continue;
    if (id.sm_count <= 0 || id.sm_clock_hz <= 0 || id.mem_bw <= 0) break;
    const double clocks = id.sm_count * id.sm_clock_hz;
    r.fp64 = clocks * a.fp64 * kFp64Efficiency;
    r.int8 = clocks * a.int8 * kInt8Efficiency;
    r.prep_bw = id.mem_bw * kPrepEfficiency;
    r.crt_bw = id.mem_bw * kCrtEfficiency;
    r.host_link = (id.cc_major >= 9 ? 64e9 : 32e9) * kLinkEfficiency;
    r.source = "estimated from the SM count, clock and memory of compute capability " +
               std::to_string(id.cc_major) + "." + std::to_string(id.cc_minor);
    return r;
  }
  return r;  // unknown: no source
}

gpu_rates prior_for(const gpu_identity& id) {
  if (const gpu_spec* s = find_published(id)) return prior_rates(*s);
  return architecture_rates(id);
}

gpu_rates bounded_calibration(const gpu_rates& measured, const gpu_rates& prior,
                              std::string* clamped) {
  gpu_rates r = measured;
  auto hold = [&](double gpu_rates::*field, const char* name) {
    const double p = prior.*field, m = measured.*field;
    if (p <= 0) return;  // nothing to hold it to
    if (m >= p / 4 && m <= 2 * p) return;
    r.*field = p;
    if (clamped != nullptr) *clamped += (clamped->empty() ? "" : ", ") + std::string(name);
  };
  hold(&gpu_rates::fp64, "FP64");
  hold(&gpu_rates::int8, "INT8");
  hold(&gpu_rates::prep_bw, "preparation bandwidth");
  hold(&gpu_rates::crt_bw, "CRT bandwidth");
  hold(&gpu_rates::host_link, "host link");
  hold(&gpu_rates::cpu_blas, "CPU BLAS");
  return r;
}

gpu_rates with_margin(const gpu_rates& measured) {
  gpu_rates r = measured;
  r.int8 *= kCalibrationMargin;
  r.prep_bw *= kCalibrationMargin;
  r.crt_bw *= kCalibrationMargin;
  r.host_link *= kCalibrationMargin;
  return r;
}

published_table published_gpus() { return {std::begin(kTable), std::end(kTable)}; }

}  // namespace ozdgemm::detail
