// Strided batches of n x n x n float64 (or complex128) GEMMs at a fixed moduli count, timed four
// ways: native cublasDgemmStridedBatched (cublasZgemmStridedBatched), the same call under
// cuBLAS's own FP64 emulation (a second handle, eager strategy, dynamic mantissa control:
// bench/common/bench_methods.hpp), the batched engine (ozdgemm_dgemm_strided_batched /
// ozdgemm_zgemm_strided_batched, one emulation per chunk of matrices, engine/batched_emulate.hpp,
// engine/batched_complex.hpp) and one ozdgemm_dgemm (ozdgemm_zgemm) per matrix (what every other
// batch runs). One CSV line per shape and method, `dtype,batch,n,s,scaling,method,ms,same_bits`:
// ms the median of 5 timed calls (CUDA events) after two untimed ones, same_bits whether the
// method's C equals the per-matrix calls' bit for bit (native: -; cublas_emu: whether it equals
// native's, which says cuBLAS did not emulate).
//
//     batched_engine_bench [--s S] [--accurate] [--complex] [batch:n ...]
//                                                          (default 64:512 256:128 16:1024)
#include <cuComplex.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/bench_methods.hpp"
#include "ozdgemm/ozdgemm.h"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "batched_engine_bench: %s failed\n", what);
    std::exit(1);
  }
}

float median_ms(const std::function<void()>& f) {
  f();
  f();
  check(cudaDeviceSynchronize() == cudaSuccess, "warm-up");
  std::vector<float> ms;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(e0);
    f();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float t = 0.0f;
    cudaEventElapsedTime(&t, e0, e1);
    ms.push_back(t);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Uniform in [-0.5, 0.5) from splitmix64: a batch of 4 x 8192^2 complex entries takes seconds
// with std::mt19937_64 and a distribution, a fraction of one here.
struct uniform {
  uint64_t state;
  double operator()() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53 - 0.5;
  }
};

bool same(const std::vector<double>& x, const std::vector<double>& y) {
  return std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int s = 14;
  bool accurate = false, complex = false;
  std::vector<std::pair<long, long>> shapes;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--s") == 0 && i + 1 < argc) {
      s = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--accurate") == 0) {
      accurate = true;
    } else if (std::strcmp(argv[i], "--complex") == 0) {
      complex = true;
    } else {
      long b = 0, n = 0;
      check(std::sscanf(argv[i], "%ld:%ld", &b, &n) == 2 && b > 0 && n > 0, "parsing batch:n");
      shapes.emplace_back(b, n);
    }
  }
  if (shapes.empty()) shapes = {{64, 512}, {256, 128}, {16, 1024}};
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "batched_engine_bench: no CUDA device\n");
    return 77;
  }
  cublasHandle_t h = nullptr;
  check(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  cublasHandle_t emu = nullptr;  // cuBLAS's emulation; null where this cuBLAS lacks it
  check(cublasCreate(&emu) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  const std::string no_emu = ozdgemm::bench::configure_cublas_emulation(emu, false, 0);
  if (!no_emu.empty()) {
    std::fprintf(stderr, "batched_engine_bench: no cuBLAS emulation (%s)\n", no_emu.c_str());
    cublasDestroy(emu);
    emu = nullptr;
  }
  ozdgemm_options_t o = ozdgemm_default_options();
  o.num_moduli = s;
  o.scaling = accurate ? OZDGEMM_SCALING_ACCURATE : OZDGEMM_SCALING_FAST;
  std::printf("dtype,batch,n,s,scaling,method,ms,same_bits\n");
  const char* dtype = complex ? "complex128" : "float64";
  const int w = complex ? 2 : 1;  // doubles per element
  uniform u{1};
  for (const auto& shape : shapes) {
    const long batch = shape.first, n = shape.second;
    const size_t per = static_cast<size_t>(n) * n, all = per * batch * w;
    std::vector<double> ha(all), hb(all);
    for (double& x : ha) x = u();
    for (double& x : hb) x = u();
    double *a = nullptr, *b = nullptr, *c = nullptr;
    check(cudaMalloc(&a, all * sizeof(double)) == cudaSuccess, "cudaMalloc");
    check(cudaMalloc(&b, all * sizeof(double)) == cudaSuccess, "cudaMalloc");
    check(cudaMalloc(&c, all * sizeof(double)) == cudaSuccess, "cudaMalloc");
    cudaMemcpy(a, ha.data(), all * sizeof(double), cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb.data(), all * sizeof(double), cudaMemcpyHostToDevice);
    const double alpha = 1.0, beta = 0.0;
    const cuDoubleComplex zalpha = make_cuDoubleComplex(1.0, 0.0),
                          zbeta = make_cuDoubleComplex(0, 0);
    const auto z = [](double* p) { return reinterpret_cast<cuDoubleComplex*>(p); };
    const long long stride = static_cast<long long>(per);
    const auto result = [&] {
      std::vector<double> hc(all);
      cudaMemcpy(hc.data(), c, all * sizeof(double), cudaMemcpyDeviceToHost);
      return hc;
    };
    const auto strided = [&](cublasHandle_t on) {
      const cublasStatus_t st =
          complex ? cublasZgemmStridedBatched(on, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &zalpha, z(a),
                                              n, stride, z(b), n, stride, &zbeta, z(c), n, stride,
                                              static_cast<int>(batch))
                  : cublasDgemmStridedBatched(on, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n,
                                              stride, b, n, stride, &beta, c, n, stride,
                                              static_cast<int>(batch));
      check(st == CUBLAS_STATUS_SUCCESS, "the cuBLAS strided batch");
    };
    const float native = median_ms([&] { strided(h); });
    const std::vector<double> native_c = result();
    float emulated = -1.0f;
    bool emu_as_native = false;
    if (emu != nullptr) {
      emulated = median_ms([&] { strided(emu); });
      emu_as_native = same(result(), native_c);
    }
    const float looped = median_ms([&] {
      for (long i = 0; i < batch; ++i) {
        const size_t at = i * per * w;
        const ozdgemm_status_t st =
            complex ? ozdgemm_zgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &zalpha, z(a + at), n,
                                    z(b + at), n, &zbeta, z(c + at), n, o)
                    : ozdgemm_dgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a + at, n, b + at,
                                    n, &beta, c + at, n, o);
        check(st == OZDGEMM_STATUS_SUCCESS, "the single call");
      }
    });
    const std::vector<double> per_matrix = result();
    const float engine = median_ms([&] {
      const ozdgemm_status_t st =
          complex
              ? ozdgemm_zgemm_strided_batched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &zalpha, z(a),
                                              n, stride, z(b), n, stride, &zbeta, z(c), n, stride,
                                              batch, o)
              : ozdgemm_dgemm_strided_batched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n,
                                              stride, b, n, stride, &beta, c, n, stride, batch, o);
      check(st == OZDGEMM_STATUS_SUCCESS, "the strided batch");
    });
    const bool engine_same = same(result(), per_matrix);
    const char* mode = accurate ? "accurate" : "fast";
    std::printf("%s,%ld,%ld,%d,%s,native,%.4f,-\n", dtype, batch, n, s, mode, native);
    if (emu != nullptr)
      std::printf("%s,%ld,%ld,%d,%s,cublas_emu,%.4f,%d\n", dtype, batch, n, s, mode, emulated,
                  emu_as_native ? 1 : 0);
    std::printf("%s,%ld,%ld,%d,%s,per_matrix,%.4f,1\n", dtype, batch, n, s, mode, looped);
    std::printf("%s,%ld,%ld,%d,%s,batched_engine,%.4f,%d\n", dtype, batch, n, s, mode, engine,
                engine_same ? 1 : 0);
    std::fflush(stdout);  // each shape's rows survive a time limit on the next one
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  cublasDestroy(h);
  if (emu != nullptr) cublasDestroy(emu);
  return 0;
}
