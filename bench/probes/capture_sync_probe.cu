// Whether a stream capture in one thread survives what another thread does meanwhile: the
// question behind keeping graph captures out of eager calls (engine/gpu_choice.hpp: the
// certified count's graphs were captured on the first call of a shape and whenever a call's
// arguments changed; eager calls now speculate the count instead, engine/speculation.hpp).
//
// Four threads each capture a small graph in a loop (cudaStreamCaptureModeThreadLocal, on their
// own non-blocking streams), instantiate it, launch it and wait for it. One more thread does, in
// a loop, the other thread's work of --other:
//   sync     cudaDeviceSynchronize
//   handle   cublasCreate then cublasDestroy (cuBLAS synchronises the device there)
//   alloc    cudaMalloc then cudaFree
//   none     nothing
// The graph (--graph):
//   plain      one body: a 64^3 cublasDgemm (--body cublas) or one kernel (--body kernel)
//   if         a kernel setting an IF node's value, then the IF node whose body is captured on
//              its own and added as a child graph (the structure of engine/gpu_choice.cpp)
// Prints how many captures completed and how many failed (an invalidated capture is a failure,
// not a crash); a crash ends the process with the signal's status.
//   capture_sync_probe [--graph plain|if] [--body cublas|kernel] [--other sync|handle|alloc|none]
//                      [--seconds 4]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/probe_timing.cuh"

namespace {

std::atomic<bool> go{false}, stop{false};
std::atomic<int> ready{0};
std::atomic<long> captured{0}, failed{0}, others{0};

__global__ void set_if(cudaGraphConditionalHandle h, const int* value) {
  cudaGraphSetConditional(h, *value != 0 ? 1u : 0u);
}

__global__ void touch(double* c) { c[threadIdx.x] += 1.0; }

const char* arg(int argc, char** argv, const char* name, const char* def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return def;
}

bool ok(cudaError_t e) { return e == cudaSuccess; }

// One capturing thread: its own streams, handle and buffers.
void capture_loop(const std::string& graph_kind, bool cublas_body) {
  cudaStream_t stream = nullptr, body = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&body, cudaStreamNonBlocking));
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) std::exit(1);
  double *a = nullptr, *c = nullptr;
  int* value = nullptr;
  CUDA_OK(cudaMalloc(&a, 64 * 64 * sizeof(double)));
  CUDA_OK(cudaMalloc(&c, 64 * 64 * sizeof(double)));
  CUDA_OK(cudaMalloc(&value, sizeof(int)));
  CUDA_OK(cudaMemset(value, 0, sizeof(int)));
  CUDA_OK(cudaDeviceSynchronize());
  // No capture starts before every thread is set up: the synchronisation above would meet it.
  ready.fetch_add(1);
  while (!go.load()) std::this_thread::yield();
  const double one = 1.0, zero = 0.0;
  // The work of a body, on `s` (under capture).
  auto work = [&](cudaStream_t s) {
    if (!cublas_body) {
      touch<<<1, 64, 0, s>>>(c);
      return ok(cudaGetLastError());
    }
    return cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS &&
           cublasSetWorkspace(h, nullptr, 0) == CUBLAS_STATUS_SUCCESS &&
           cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, a, 64, a, 64, &zero, c, 64) ==
               CUBLAS_STATUS_SUCCESS;
  };
  // `work` captured on its own from `s`; null when the capture failed.
  auto capture = [&](cudaStream_t s) -> cudaGraph_t {
    cudaGraph_t g = nullptr;
    bool good = ok(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal)) && work(s);
    good = ok(cudaStreamEndCapture(s, &g)) && good;
    if (!good && g != nullptr) (void)cudaGraphDestroy(g);
    return good ? g : nullptr;
  };
  while (!stop.load()) {
    cudaGraph_t g = nullptr;
    bool good = true;
    if (graph_kind == "plain") {
      g = capture(stream);
      good = g != nullptr;
    } else {
      good = ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      cudaGraph_t building = nullptr;
      cudaGraphConditionalHandle cond = 0;
      good = good && ok(cudaStreamGetCaptureInfo(stream, &status, nullptr, &building)) &&
             ok(cudaGraphConditionalHandleCreate(&cond, building, 0, cudaGraphCondAssignDefault));
      if (good) set_if<<<1, 1, 0, stream>>>(cond, value);
      const cudaGraphNode_t* deps = nullptr;
      size_t ndeps = 0;
      good =
          good && ok(cudaGetLastError()) &&
          ok(cudaStreamGetCaptureInfo(stream, &status, nullptr, &building, &deps, nullptr, &ndeps));
      cudaGraphNodeParams p = ozdgemm::bench::if_node_params(cond);
      cudaGraphNode_t node = nullptr;
      good = good && ok(cudaGraphAddNode(&node, building, deps, nullptr, ndeps, &p)) &&
             ok(cudaStreamUpdateCaptureDependencies(stream, &node, nullptr, 1,
                                                    cudaStreamSetCaptureDependencies));
      if (good) {
        const cudaGraph_t child = capture(body);
        cudaGraphNode_t added = nullptr;
        good = child != nullptr && ok(cudaGraphAddChildGraphNode(
                                       &added, p.conditional.phGraph_out[0], nullptr, 0, child));
        if (child != nullptr) (void)cudaGraphDestroy(child);
      }
      good = ok(cudaStreamEndCapture(stream, &g)) && good;
    }
    cudaGraphExec_t exec = nullptr;
    if (good && g != nullptr) good = ok(cudaGraphInstantiate(&exec, g, 0));
    if (exec != nullptr) {
      good = ok(cudaGraphLaunch(exec, stream)) && ok(cudaStreamSynchronize(stream)) && good;
      (void)cudaGraphExecDestroy(exec);
    }
    if (g != nullptr) (void)cudaGraphDestroy(g);
    (void)cudaGetLastError();
    (good ? captured : failed).fetch_add(1);
  }
}

void other_loop(const std::string& other) {
  while (!stop.load()) {
    if (other == "sync") {
      (void)cudaDeviceSynchronize();
    } else if (other == "handle") {
      cublasHandle_t h = nullptr;
      if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) cublasDestroy(h);
    } else if (other == "alloc") {
      void* p = nullptr;
      if (cudaMalloc(&p, 1 << 20) == cudaSuccess) (void)cudaFree(p);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    (void)cudaGetLastError();
    others.fetch_add(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string graph_kind = arg(argc, argv, "--graph", "plain");
  const std::string body = arg(argc, argv, "--body", "cublas");
  const std::string other = arg(argc, argv, "--other", "sync");
  const double seconds = std::atof(arg(argc, argv, "--seconds", "4"));
  if ((graph_kind != "plain" && graph_kind != "if") || (body != "cublas" && body != "kernel") ||
      (other != "sync" && other != "handle" && other != "alloc" && other != "none") ||
      seconds <= 0) {
    std::fprintf(stderr, "capture_sync_probe: see the header for the options\n");
    return 2;
  }
  CUDA_OK(cudaFree(nullptr));
  std::vector<std::thread> capturers;
  for (int i = 0; i < 4; ++i) capturers.emplace_back(capture_loop, graph_kind, body == "cublas");
  while (ready.load() < 4) std::this_thread::yield();
  go.store(true);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the captures run first
  std::thread meanwhile(other_loop, other);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  meanwhile.join();
  for (auto& t : capturers) t.join();
  std::printf("graph=%s body=%s other=%s captured=%ld failed=%ld other_calls=%ld\n",
              graph_kind.c_str(), body.c_str(), other.c_str(), captured.load(), failed.load(),
              others.load());
  std::fflush(stdout);
  return 0;
}
