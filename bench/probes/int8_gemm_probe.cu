// How fast can one INT8 GEMM (INT32 out, A^T B, the engine's layout) run on this GPU, and does
// choosing the cuBLASLt algorithm ourselves beat what cublasGemmEx picks? Issue 4 asks for the
// algorithm to be chosen once per shape and cached; this probe measures what that could buy
// before the engine pays for it. One table per run:
//   - cublasGemmEx (CUBLAS_GEMM_DEFAULT), what the engine calls today, one modulus per call;
//   - cublasGemmStridedBatchedEx over `batch` moduli (the engine's small-shape choice), per GEMM;
//   - every algorithm cuBLASLt's heuristic offers (up to 16), each timed; the heuristic's first
//     choice and the fastest are marked.
// Timing: CUDA events, one warm-up, median of `reps` runs.
//   int8_gemm_probe [--shapes MxNxK,...] [--reps R] [--batch S]
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/hash_fill.cuh"
#include "common/probe_timing.cuh"

namespace {

using ozdgemm::bench::median_ms;

#define BLAS_OK(x)                                                                \
  do {                                                                            \
    int s_ = static_cast<int>(x);                                                 \
    if (s_ != 0) {                                                                \
      std::fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, s_); \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

struct shape {
  int64_t m, n, k;
};

std::vector<shape> parse_shapes(const char* s) {
  std::vector<shape> out;
  std::string text(s);
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    long long m = 0, n = 0, k = 0;
    if (std::sscanf(item.c_str(), "%lldx%lldx%lld", &m, &n, &k) == 3) out.push_back({m, n, k});
    else if (std::sscanf(item.c_str(), "%lld", &m) == 1) out.push_back({m, m, m});
    pos = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<shape> shapes =
      parse_shapes("16384,16384x16384x4096,8192,4096,4096x4096x65536,2048");
  int reps = 7, batch = 14;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--shapes") == 0) shapes = parse_shapes(argv[i + 1]);
    else if (std::strcmp(argv[i], "--reps") == 0) reps = std::max(1, std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--batch") == 0) batch = std::max(1, std::atoi(argv[i + 1]));
  }
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  CUDA_OK(cudaDriverGetVersion(&driver));
  CUDA_OK(cudaRuntimeGetVersion(&runtime));
  std::printf("int8_gemm_probe: %s, driver API %d, runtime %d, cuBLASLt %zu; C = A^T B, INT8 in, "
              "INT32 out; median of %d\n",
              prop.name, driver, runtime, cublasLtGetVersion(), reps);

  cudaStream_t st;
  CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cublasHandle_t h;
  BLAS_OK(cublasCreate(&h));
  BLAS_OK(cublasSetStream(h, st));
  cublasLtHandle_t lt;
  BLAS_OK(cublasLtCreate(&lt));
  const size_t ws_bytes = size_t{64} << 20;
  void* ws;
  CUDA_OK(cudaMalloc(&ws, ws_bytes));
  const int32_t one = 1, zero = 0;

  std::printf("%-22s %-34s %10s %8s\n", "shape", "method", "ms", "TOPS");
  for (const shape& sh : shapes) {
    const int64_t m = sh.m, n = sh.n, k = sh.k;
    const int nb = (m * n * k <= (int64_t{1} << 37)) ? batch : 1;  // batched only where it fits
    int8_t *a, *b;
    int32_t* c;
    CUDA_OK(cudaMalloc(&a, size_t(m) * k * nb));
    CUDA_OK(cudaMalloc(&b, size_t(n) * k * nb));
    CUDA_OK(cudaMalloc(&c, size_t(m) * n * 4 * nb));
    ozdgemm::bench::fill_hash<<<1024, 256, 0, st>>>(reinterpret_cast<uint32_t*>(a),
                                                    size_t(m) * k * nb / 4, 1, ~0u);
    ozdgemm::bench::fill_hash<<<1024, 256, 0, st>>>(reinterpret_cast<uint32_t*>(b),
                                                    size_t(n) * k * nb / 4, 2, ~0u);
    CUDA_OK(cudaStreamSynchronize(st));
    const double ops = 2.0 * m * n * k;
    char name[64];
    std::snprintf(name, sizeof name, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
    auto row = [&](const char* method, double ms, double per) {
      std::printf("%-22s %-34s %10.3f %8.1f\n", name, method, ms, per * ops / (ms * 1e-3) / 1e12);
    };

    const double t_ex = median_ms(
        [&] {
          BLAS_OK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(m), int(n), int(k), &one, a,
                               CUDA_R_8I, int(k), b, CUDA_R_8I, int(k), &zero, c, CUDA_R_32I,
                               int(m), CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
        },
        reps, st);
    row("cublasGemmEx default", t_ex, 1.0);
    if (nb > 1) {
      const double t_b = median_ms(
          [&] {
            BLAS_OK(cublasGemmStridedBatchedEx(
                h, CUBLAS_OP_T, CUBLAS_OP_N, int(m), int(n), int(k), &one, a, CUDA_R_8I, int(k),
                m * k, b, CUDA_R_8I, int(k), n * k, &zero, c, CUDA_R_32I, int(m), m * n, nb,
                CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
          },
          reps, st);
      char label[64];
      std::snprintf(label, sizeof label, "strided batched x%d, per GEMM", nb);
      row(label, t_b / nb, 1.0);
    }

    cublasLtMatmulDesc_t desc;
    BLAS_OK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32I, CUDA_R_32I));
    const cublasOperation_t opT = CUBLAS_OP_T;
    BLAS_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof opT));
    cublasLtMatrixLayout_t la, lb, lc;
    BLAS_OK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8I, k, m, k));
    BLAS_OK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8I, k, n, k));
    BLAS_OK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32I, m, n, m));
    cublasLtMatmulPreference_t pref;
    BLAS_OK(cublasLtMatmulPreferenceCreate(&pref));
    BLAS_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &ws_bytes, sizeof ws_bytes));
    cublasLtMatmulHeuristicResult_t res[16];
    int found = 0;
    BLAS_OK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 16, res, &found));
    double best = 1e30;
    int best_i = -1;
    for (int i = 0; i < found; ++i) {
      const double t = median_ms(
          [&] {
            BLAS_OK(cublasLtMatmul(lt, desc, &one, a, la, b, lb, &zero, c, lc, c, lc, &res[i].algo,
                                   ws, ws_bytes, st));
          },
          reps, st);
      int tile = 0, stages = 0, splitk = 0;
      size_t w = 0;
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                           sizeof tile, &w);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                           sizeof stages, &w);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                           sizeof splitk, &w);
      uint16_t cluster = 0;
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID,
                                           &cluster, sizeof cluster, &w);
      char label[64];
      std::snprintf(label, sizeof label, "lt heuristic #%d (tile %d st %d sk %d cl %d)%s", i, tile,
                    stages, splitk, cluster, i == 0 ? " *" : "");
      row(label, t, 1.0);
      if (t < best) best = t, best_i = i;
    }
    if (best_i >= 0) {
      char label[64];
      std::snprintf(label, sizeof label, "lt fastest = #%d (vs GemmEx %.3fx)", best_i, t_ex / best);
      row(label, best, 1.0);
      // The heuristic's kernels for these shapes are persistent with 4-CTA clusters: 120 CTAs,
      // 12 of the H200's 132 SMs idle. The same algorithm with each smaller cluster shape, where
      // cuBLASLt accepts it (cublasLtMatmulAlgoCheck), timed alike.
      const struct {
        uint16_t id;
        const char* name;
      } kClusters[] = {
          {CUBLASLT_CLUSTER_SHAPE_1x1x1, "1x1x1"}, {CUBLASLT_CLUSTER_SHAPE_2x1x1, "2x1x1"},
          {CUBLASLT_CLUSTER_SHAPE_1x2x1, "1x2x1"}, {CUBLASLT_CLUSTER_SHAPE_4x1x1, "4x1x1"},
          {CUBLASLT_CLUSTER_SHAPE_1x4x1, "1x4x1"}, {CUBLASLT_CLUSTER_SHAPE_2x2x1, "2x2x1"}};
      for (int base : {0, best_i}) {
        for (const auto& cl : kClusters) {
          cublasLtMatmulAlgo_t algo = res[base].algo;
          cublasLtMatmulHeuristicResult_t chk{};
          if (cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID,
                                                   &cl.id, sizeof cl.id) != CUBLAS_STATUS_SUCCESS ||
              cublasLtMatmulAlgoCheck(lt, desc, la, lb, lc, lc, &algo, &chk) !=
                  CUBLAS_STATUS_SUCCESS ||
              chk.workspaceSize > ws_bytes) {
            std::printf("%-22s lt #%d cluster %-8s rejected\n", name, base, cl.name);
            continue;
          }
          const double t = median_ms(
              [&] {
                BLAS_OK(cublasLtMatmul(lt, desc, &one, a, la, b, lb, &zero, c, lc, c, lc, &algo, ws,
                                       ws_bytes, st));
              },
              reps, st);
          std::snprintf(label, sizeof label, "lt #%d cluster %s (vs #%d %.3fx)", base, cl.name,
                        best_i, best / t);
          row(label, t, 1.0);
        }
        if (best_i == 0) break;
      }
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(desc);
    CUDA_OK(cudaFree(a));
    CUDA_OK(cudaFree(b));
    CUDA_OK(cudaFree(c));
    std::fflush(stdout);
  }
  cublasLtDestroy(lt);
  cublasDestroy(h);
  CUDA_OK(cudaFree(ws));
  return 0;
}
