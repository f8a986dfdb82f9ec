// Does an INT8 GEMM run slower inside a CUDA graph conditional body than launched on a stream,
// and why? The certified count chosen on the GPU puts its modulus GEMMs in such bodies
// (engine/gpu_choice.hpp) with no cuBLASLt workspace and the heuristic's untimed first
// algorithm; those calls ran 1.2-1.4x slower than the same calls chosen on the host. One INT8
// GEMM (C = A^T B, INT32 out, the engine's layout, `batch` products strided as the engine's
// planes) is timed, per shape, as:
//   eager  wsW #i    cublasLtMatmul on a stream, workspace W MiB, heuristic's candidate i
//   graph  wsW #i    the same captured into a plain graph, the graph launched
//   cond   wsW #i    the same captured into the body of an IF node (condition 1), launched
//   gemmex eager / cond   cublasGemmStridedBatchedEx, the handle's default workspace / none
// CUDA events around each launch, median of --reps after a warm-up. A variant that cannot be
// captured or instantiated says so.
//   conditional_gemm_probe [--shapes MxNxKxB,...] [--reps R]
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/hash_fill.cuh"
#include "common/probe_timing.cuh"

namespace {

using ozdgemm::bench::median_ms;

struct shape {
  long long m, n, k, batch;
};

std::vector<shape> parse_shapes(const char* s) {
  std::vector<shape> out;
  std::string text(s);
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find(',', pos), text.size());
    shape sh{0, 0, 0, 1};
    if (std::sscanf(text.substr(pos, end - pos).c_str(), "%lldx%lldx%lldx%lld", &sh.m, &sh.n, &sh.k,
                    &sh.batch) >= 3)
      out.push_back(sh);
    pos = end + 1;
  }
  return out;
}

// `work` captured on `st` into a plain graph (conditional = false) or into the body of an IF
// node whose condition is 1 at every launch; nullptr (with the reason printed) when CUDA refuses.
cudaGraphExec_t make_graph(cudaStream_t st, bool conditional,
                           const std::function<bool(cudaStream_t)>& work, std::string* why) {
  cudaGraph_t graph = nullptr;
  CUDA_OK(cudaGraphCreate(&graph, 0));
  cudaGraph_t into = graph;
  if (conditional) {
    cudaGraphConditionalHandle cond = 0;
    CUDA_OK(cudaGraphConditionalHandleCreate(&cond, graph, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams p = ozdgemm::bench::if_node_params(cond);
    cudaGraphNode_t node = nullptr;
    CUDA_OK(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &p));
    into = p.conditional.phGraph_out[0];
  }
  cudaError_t e = cudaStreamBeginCaptureToGraph(st, into, nullptr, nullptr, 0,
                                                cudaStreamCaptureModeThreadLocal);
  bool ok = e == cudaSuccess && work(st);
  cudaGraph_t captured = nullptr;
  const cudaError_t end = e == cudaSuccess ? cudaStreamEndCapture(st, &captured) : e;
  cudaGraphExec_t exec = nullptr;
  if (ok && end == cudaSuccess)
    e = cudaGraphInstantiate(&exec, graph, 0);
  else
    e = end != cudaSuccess ? end : cudaErrorUnknown;
  if (e != cudaSuccess || !ok) {
    *why = ok ? cudaGetErrorString(e) : "the GEMM call failed under capture";
    (void)cudaGetLastError();
    exec = nullptr;
  }
  (void)cudaGraphDestroy(graph);
  return exec;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<shape> shapes = parse_shapes(
      "4096x16384x16384x1,2048x8192x8192x1,8192x8192x8192x1,1024x4096x4096x15,2048x2048x2048x15");
  int reps = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--shapes") == 0)
      shapes = parse_shapes(argv[i + 1]);
    else if (std::strcmp(argv[i], "--reps") == 0)
      reps = std::max(1, std::atoi(argv[i + 1]));
  }
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  std::printf(
      "conditional_gemm_probe: %s, cuBLASLt %zu; C = A^T B, INT8 in, INT32 out; median "
      "of %d; ms per launch (all batch products)\n",
      prop.name, cublasLtGetVersion(), reps);
  cudaStream_t st;
  CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetStream(h, st) != CUBLAS_STATUS_SUCCESS)
    return 1;
  const auto lt = reinterpret_cast<cublasLtHandle_t>(h);  // documented by cuBLAS
  const size_t ws_max = size_t{64} << 20;
  void* ws = nullptr;
  CUDA_OK(cudaMalloc(&ws, ws_max));
  const int32_t one = 1, zero = 0;
  std::printf("%-22s %-44s %10s\n", "shape", "variant", "ms");
  for (const shape& sh : shapes) {
    const long long m = sh.m, n = sh.n, k = sh.k, nb = sh.batch;
    int8_t *a, *b;
    int32_t* c;
    CUDA_OK(cudaMalloc(&a, size_t(m) * k * nb));
    CUDA_OK(cudaMalloc(&b, size_t(n) * k * nb));
    CUDA_OK(cudaMalloc(&c, size_t(m) * n * 4 * nb));
    ozdgemm::bench::fill_hash<<<1024, 256, 0, st>>>(reinterpret_cast<uint32_t*>(a),
                                                    size_t(m) * k * nb / 4, 1, 0x7f7f7f7fu);
    ozdgemm::bench::fill_hash<<<1024, 256, 0, st>>>(reinterpret_cast<uint32_t*>(b),
                                                    size_t(n) * k * nb / 4, 2, 0x7f7f7f7fu);
    CUDA_OK(cudaStreamSynchronize(st));
    char name[64];
    std::snprintf(name, sizeof name, "%lldx%lldx%lld x%lld", m, n, k, nb);
    auto row = [&](const std::string& variant, double ms) {
      std::printf("%-22s %-44s %10.3f\n", name, variant.c_str(), ms);
      std::fflush(stdout);
    };

    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32I, CUDA_R_32I);
    const cublasOperation_t opT = CUBLAS_OP_T;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof opT);
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatrixLayoutCreate(&la, CUDA_R_8I, k, m, k);
    cublasLtMatrixLayoutCreate(&lb, CUDA_R_8I, k, n, k);
    cublasLtMatrixLayoutCreate(&lc, CUDA_R_32I, m, n, m);
    if (nb > 1) {
      const int count = static_cast<int>(nb);
      const long long sa = m * k, sb = n * k, sc = m * n;
      for (auto [l, stride] : {std::pair{la, sa}, std::pair{lb, sb}, std::pair{lc, sc}}) {
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                         sizeof count);
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                         sizeof stride);
      }
    }
    for (const size_t wsb : {ws_max, size_t{0}}) {
      cublasLtMatmulPreference_t pref;
      cublasLtMatmulPreferenceCreate(&pref);
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb,
                                           sizeof wsb);
      cublasLtMatmulHeuristicResult_t res[8];
      int found = 0;
      cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 8, res, &found);
      cublasLtMatmulPreferenceDestroy(pref);
      const std::string tag = "ws" + std::to_string(wsb >> 20);
      double best = 1e30;
      int best_i = -1;
      for (int i = 0; i < found; ++i) {
        auto gemm = [&, i](cudaStream_t s) {
          return cublasLtMatmul(lt, desc, &one, a, la, b, lb, &zero, c, lc, c, lc, &res[i].algo,
                                wsb ? ws : nullptr, wsb, s) == CUBLAS_STATUS_SUCCESS;
        };
        int splitk = 0, tile = 0;
        size_t w = 0;
        cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                             sizeof splitk, &w);
        cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                             sizeof tile, &w);
        const std::string algo = " #" + std::to_string(i) + " (tile " + std::to_string(tile) +
                                 " sk " + std::to_string(splitk) + " needs " +
                                 std::to_string(res[i].workspaceSize >> 10) + " KiB)";
        const double t = median_ms([&] { gemm(st); }, reps, st);
        row("eager " + tag + algo, t);
        if (t < best) best = t, best_i = i;
        for (const bool cond : {false, true}) {
          if (i != 0 && !cond) continue;  // plain graphs: the first candidate only
          std::string why;
          cudaGraphExec_t g = make_graph(st, cond, gemm, &why);
          const std::string label = std::string(cond ? "cond  " : "graph ") + tag + algo;
          if (g == nullptr) {
            std::printf("%-22s %-44s refused: %s\n", name, label.c_str(), why.c_str());
            continue;
          }
          row(label, median_ms([&] { CUDA_OK(cudaGraphLaunch(g, st)); }, reps, st));
          CUDA_OK(cudaGraphExecDestroy(g));
        }
      }
      if (best_i >= 0) row("eager " + tag + " fastest #" + std::to_string(best_i), best);
    }
    auto gemmex = [&](cudaStream_t) {  // the handle is bound to st, the stream captured
      return cublasGemmStridedBatchedEx(
                 h, CUBLAS_OP_T, CUBLAS_OP_N, int(m), int(n), int(k), &one, a, CUDA_R_8I, int(k),
                 m * k, b, CUDA_R_8I, int(k), n * k, &zero, c, CUDA_R_32I, int(m), m * n, int(nb),
                 CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
    };
    row("gemmex eager, default workspace", median_ms([&] { gemmex(st); }, reps, st));
    cublasSetWorkspace(h, nullptr, 0);
    row("gemmex eager, no workspace", median_ms([&] { gemmex(st); }, reps, st));
    std::string why;
    cudaGraphExec_t g = make_graph(st, true, gemmex, &why);
    if (g != nullptr) {
      row("gemmex cond, no workspace",
          median_ms([&] { CUDA_OK(cudaGraphLaunch(g, st)); }, reps, st));
      CUDA_OK(cudaGraphExecDestroy(g));
    } else {
      std::printf("%-22s %-44s refused: %s\n", name, "gemmex cond, no workspace", why.c_str());
    }
    cublasSetStream(h, st);  // binding the stream again restores the default workspace
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(desc);
    CUDA_OK(cudaFree(a));
    CUDA_OK(cudaFree(b));
    CUDA_OK(cudaFree(c));
  }
  cublasDestroy(h);
  CUDA_OK(cudaFree(ws));
  return 0;
}
