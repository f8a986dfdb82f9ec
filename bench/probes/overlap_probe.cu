// Can the engine's memory-bound CRT run beside its INT8 GEMMs? Issue 4 asks for preparation and
// reduction to overlap with the GEMMs. On the H200, cuBLASLt's INT8 kernel for the engine's
// shapes is persistent: 120 CTAs of 384 threads, one per SM (231 KB of shared memory, 168
// registers), in clusters, so 12 of the 132 SMs sit idle while it runs (ncu,
// bench/results/probes/README.md). A kernel on another stream can only gain if
// its CTAs stay on those SMs instead of taking SMs the next GEMM needs.
//
// One measurement per side-grid size: the s GEMMs of one block of rows of C (the engine's own
// int8_gemm, cuBLASLt backend, batched over the moduli) on stream 1, and a CRT over the INT32
// products of another block (the engine's per-element CRT code, core/crt.hpp, with a
// grid-stride loop over `ctas` CTAs of 1024 threads; ctas = 0: a full grid, as the engine
// launches it) on stream 2: alone, and both at once in either launch order. CUDA events,
// median of --reps. hidden = (G + S - both) / min(G, S): 0 is no overlap, 1 is full.
//   overlap_probe [--m 4096] [--n 16384] [--k 16384] [--reps 5] [--ctas 0,12,24,48]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/bench_cuda.hpp"
#include "common/hash_fill.cuh"
#include "core/crt.hpp"
#include "core/moduli.hpp"
#include "engine/int8_gemm.hpp"

namespace {

using namespace ozdgemm::detail;
namespace bench = ozdgemm::bench;

constexpr int kS = 14;  // the moduli count of the headline runs
constexpr int kSideThreads = 1024;

// The engine's CRT per element (kernels/crt.cu without alpha/beta and non-finite handling),
// over a grid-stride loop so that the grid size is free.
__global__ void __launch_bounds__(kSideThreads)
    crt_side(const int32_t* prod, int64_t plane, modulus_table tb, double* out) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < plane;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int32_t r[kS];
#pragma unroll
    for (int t = 0; t < kS; ++t) r[t] = __ldcs(prod + t * plane + i);
    crt_accumulator<limbs_for(kS)> acc;
#pragma unroll
    for (int t = 0; t < kS; ++t) acc.add(crt_residue(r[t], tb, t), tb, t);
    out[i] = acc.finish(tb, 0);
  }
}

int64_t arg_int(int argc, char** argv, const char* name, int64_t def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoll(argv[i + 1]);
  return def;
}

std::vector<int> arg_list(int argc, char** argv, const char* name, const char* def) {
  const char* s = def;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) s = argv[i + 1];
  std::vector<int> out;
  for (const char* p = s; *p != '\0';) {
    out.push_back(std::atoi(p));
    while (*p != '\0' && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) try {
  const int64_t m = arg_int(argc, argv, "--m", 4096), n = arg_int(argc, argv, "--n", 16384),
                k = arg_int(argc, argv, "--k", 16384);
  const int reps = static_cast<int>(arg_int(argc, argv, "--reps", 5));
  const std::vector<int> ctas_list = arg_list(argc, argv, "--ctas", "0,12,24,48");
  if (m % 16 != 0 || n % 16 != 0 || k % 16 != 0 || reps < 1) {
    std::fprintf(stderr, "m, n, k must be multiples of 16, reps >= 1\n");
    return 2;
  }
  cudaDeviceProp prop{};
  OZDGEMM_CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
  int driver = 0;
  OZDGEMM_CUDA_TRY(cudaDriverGetVersion(&driver));
  std::printf(
      "GPU %s, %d SMs, driver API %d; GEMMs %lld x %lld x %lld x %d moduli, CRT over "
      "%lld x %lld x %d INT32\n",
      prop.name, prop.multiProcessorCount, driver, static_cast<long long>(m),
      static_cast<long long>(n), static_cast<long long>(k), kS, static_cast<long long>(m),
      static_cast<long long>(n), kS);

  const modulus_table& tb = moduli_for(kS);
  const int64_t plane = m * n;
  bench::device_array<int8_t> a(static_cast<size_t>(kS * m * k)),
      b(static_cast<size_t>(kS * n * k));
  bench::device_array<int32_t> c(static_cast<size_t>(kS * plane)),
      side_prod(static_cast<size_t>(kS * plane));
  bench::device_array<double> side_out(static_cast<size_t>(plane));
  bench::fill_hash<<<1024, 256>>>(reinterpret_cast<uint32_t*>(a.get()), a.size() / 4, 1, ~0u);
  bench::fill_hash<<<1024, 256>>>(reinterpret_cast<uint32_t*>(b.get()), b.size() / 4, 2, ~0u);
  // Products of the size the GEMMs give (|p| < 2^30).
  bench::fill_hash<<<1024, 256>>>(reinterpret_cast<uint32_t*>(side_prod.get()), side_prod.size(), 3,
                                  0x3FFFFFFFu);
  OZDGEMM_CUDA_TRY(cudaDeviceSynchronize());

  bench::cuda_stream s0, s1, s2;
  bench::cublas_handle handle(s1.get());
  const size_t ws_bytes = int8_gemm_workspace_bytes(int8_gemm_backend::lt, m, n);
  bench::device_array<uint8_t> ws(ws_bytes + 256);
  const int8_gemm_target target{handle.get(), s1.get(), int8_gemm_backend::lt, ws.get(), ws_bytes};
  bench::event_pool ev(2 + 4);

  auto gemms = [&] {
    int8_gemm(target, m, n, 0, k, k, a.get(), m * k, b.get(), c.get(), kS, false);
  };
  auto side = [&](int ctas) {
    const int grid = ctas > 0 ? ctas : prop.multiProcessorCount * 2;
    crt_side<<<grid, kSideThreads, 0, s2.get()>>>(side_prod.get(), plane, tb, side_out.get());
  };
  // One timed run: fork s1 and s2 from s0, enqueue, join back into s0.
  auto run = [&](bool g, int ctas, bool side_first) {
    OZDGEMM_CUDA_TRY(cudaEventRecord(ev[0], s0.get()));
    OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(s1.get(), ev[0]));
    OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(s2.get(), ev[0]));
    if (side_first && ctas >= 0) side(ctas);
    if (g) gemms();
    if (!side_first && ctas >= 0) side(ctas);
    OZDGEMM_CUDA_TRY(cudaEventRecord(ev[2], s1.get()));
    OZDGEMM_CUDA_TRY(cudaEventRecord(ev[3], s2.get()));
    OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(s0.get(), ev[2]));
    OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(s0.get(), ev[3]));
    OZDGEMM_CUDA_TRY(cudaEventRecord(ev[1], s0.get()));
    OZDGEMM_CUDA_TRY(cudaEventSynchronize(ev[1]));
    OZDGEMM_CUDA_TRY(cudaGetLastError());
    return static_cast<double>(bench::elapsed_ms(ev[0], ev[1]));
  };
  auto med = [&](bool g, int ctas, bool side_first) {
    run(g, ctas, side_first);  // warm-up (the first GEMM call also times cuBLASLt's candidates)
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) t.push_back(run(g, ctas, side_first));
    return bench::median(t);
  };

  const double tg = med(true, -1, false);
  const double tflops = 2.0 * m * n * k * kS / (tg * 1e-3) / 1e12;
  std::printf("GEMMs alone: %.3f ms (%.0f TOPS)\n", tg, tflops);
  std::printf("%-6s %10s %14s %10s %14s %10s\n", "ctas", "CRT alone", "GEMM then CRT", "hidden",
              "CRT then GEMM", "hidden");
  for (int ctas : ctas_list) {
    const double ts = med(false, ctas, false);
    const double tgs = med(true, ctas, false);
    const double tsg = med(true, ctas, true);
    const double shorter = ts < tg ? ts : tg;
    std::printf("%-6s %10.3f %14.3f %10.2f %14.3f %10.2f\n",
                ctas > 0 ? std::to_string(ctas).c_str() : "full", ts, tgs,
                (tg + ts - tgs) / shorter, tsg, (tg + ts - tsg) / shorter);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "overlap_probe: %s\n", e.what());
  return 1;
}
