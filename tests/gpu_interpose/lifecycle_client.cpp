// A plain cuBLAS program for the lifecycle and fault tests, run under
// LD_PRELOAD=libozdgemm.so (usually OZDGEMM_MODE=emulate) by tests/gpu_interpose/CMakeLists.txt,
// which also checks the library's log. One mode per run:
//   graph           an emulated cublasDgemm captured into a CUDA graph after a warm call on the
//                   same stream (must be emulated: bitwise equal to the warm call), on another
//                   stream of the same handle, and on a cold handle (emulated or native, the
//                   capture must stay valid and the result correct);
//   fork            emulated calls, then fork(): the child's cublasDgemm (parent's handle) must
//                   return without hanging or crashing, and its host DGEMM (cblas_dgemm) must be
//                   correct; the parent goes on emulating correctly afterwards;
//   exit-in-flight  enqueue emulated calls on a stream, return from main without a sync;
//   exit-destroyed  the same, with cublasDestroy right after the enqueue;
//   exit-thread     exit(0) from main while another thread keeps enqueueing;
//   no-gpu          (CUDA_VISIBLE_DEVICES="") cublasCreate / cublasDgemm give the real cuBLAS
//                   statuses, and host DGEMM (cblas_dgemm) is correct;
//   fault           (OZDGEMM_INJECT_FAULT=kind:2) the C API call returns the stated status and
//                   leaves C untouched; the intercepted call falls back (result within the
//                   bound of native, bitwise equal to native); the next call is emulated again
//                   (bitwise equal to the host reference);
//   cap             (OZDGEMM_MAX_WORKSPACE small) a large call runs natively, correct; a small
//                   one is emulated;
//   sync-beside     for 3 s, emulated calls of four shapes, each into a freshly allocated C,
//                   while another thread synchronises the device (cudaDeviceSynchronize) and
//                   creates and destroys cuBLAS handles: no crash, every result bitwise equal to
//                   the host reference. (A stream capture inside the library's eager calls
//                   would crash the driver here: docs/default.md.)
// Exit status: 0 pass, 1 fail, 77 skipped (no device / library not preloaded where needed).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client_support.hpp"

namespace {

using dgemm_fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const double*, const double*, int, const double*, int,
                                    const double*, double*, int);

dgemm_fn native_dgemm() {
  void* lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
  return lib ? reinterpret_cast<dgemm_fn>(dlsym(lib, "cublasDgemm_v2")) : nullptr;
}

std::vector<double> random_matrix(size_t count, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> x(count);
  for (double& e : x) e = u(g);
  return x;
}

// One square problem C = A B + 0.5 C on the device, with its host data.
struct problem {
  int n;
  std::vector<double> a, b, c0;
  double *da = nullptr, *db = nullptr, *dc = nullptr;
  // on_device false: host data only (no CUDA call at all: usable in a forked child).
  explicit problem(int size, uint64_t seed = 1, bool on_device = true) : n(size) {
    const size_t nn = size_t(n) * n;
    a = random_matrix(nn, seed);
    b = random_matrix(nn, seed + 1);
    c0 = random_matrix(nn, seed + 2);
    if (!on_device) return;
    cudaMalloc(&da, nn * 8);
    cudaMalloc(&db, nn * 8);
    cudaMalloc(&dc, nn * 8);
    cudaMemcpy(da, a.data(), nn * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b.data(), nn * 8, cudaMemcpyHostToDevice);
    reset();
  }
  ~problem() {
    if (da == nullptr) return;
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
  }
  void reset(cudaStream_t s = nullptr) {
    cudaMemcpyAsync(dc, c0.data(), c0.size() * 8, cudaMemcpyHostToDevice, s);
    cudaStreamSynchronize(s);
  }
  cublasStatus_t run(cublasHandle_t h) const {
    const double one = 1.0, half = 0.5;
    return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, da, n, db, n, &half, dc, n);
  }
  std::vector<double> result() const {
    std::vector<double> c(size_t(n) * n);
    cudaDeviceSynchronize();
    cudaMemcpy(c.data(), dc, c.size() * 8, cudaMemcpyDeviceToHost);
    return c;
  }
  // The library's host reference (bitwise what an emulated call gives), if preloaded.
  std::vector<double> reference() const {
    std::vector<double> c = c0;
    ref_fn ref = preloaded_symbol<ref_fn>("ozdgemm_dgemm_reference");
    if (ref == nullptr ||
        ref('N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.5, c.data(), n, env_options()) != 0)
      return {};
    return c;
  }
  // Largest |c - exact| / (|A||B| + |0.5 C0|) over the matrix (exact in long double).
  double scaled_error(const std::vector<double>& c) const {
    double worst = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        long double s = 0, sa = 0;
        for (int l = 0; l < n; ++l) {
          const long double p = (long double)a[size_t(l) * n + i] * b[size_t(j) * n + l];
          s += p;
          sa += std::fabs(p);
        }
        const long double c0v = 0.5L * c0[size_t(j) * n + i];
        const double e =
            double(std::fabs(c[size_t(j) * n + i] - (s + c0v)) / (sa + std::fabs(c0v)));
        if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
      }
    return worst;
  }
};

bool bitwise_equal(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * 8) == 0;
}

// Within what any sound FP64 GEMM gives for these sizes: (n + 2) 2^-52 relative to |A||B|.
bool within_native_bound(const problem& p, const std::vector<double>& c) {
  const double e = p.scaled_error(c);
  return e <= (p.n + 2) * 0x1p-52;
}

// Host DGEMM through cblas_dgemm (the library's hook), checked against the long double exact.
int host_dgemm_check(const char* who) {
  cblas_fn cblas = preloaded_symbol<cblas_fn>("cblas_dgemm");
  if (cblas == nullptr) return 0;
  const int n = 96;
  const problem p(n, 77, false);
  std::vector<double> c = p.c0;
  cblas(102, 111, 111, n, n, n, 1.0, p.a.data(), n, p.b.data(), n, 0.5, c.data(), n);
  const double e = p.scaled_error(c);
  std::printf("%s: host cblas_dgemm %dx%dx%d scaled error %.3g\n", who, n, n, n, e);
  return e <= (n + 2) * 0x1p-52 ? 0 : 1;
}

bool expect_emulation() {
  const char* m = std::getenv("OZDGEMM_MODE");
  return m != nullptr && std::strcmp(m, "emulate") == 0 &&
         preloaded_symbol<ref_fn>("ozdgemm_dgemm_reference") != nullptr;
}

// ---------------------------------------------------------------------------------------------

int mode_graph() {
  problem p(512);
  const std::vector<double> ref = p.reference();
  cublasHandle_t h;
  CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  cudaStream_t s1, s2;
  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  cublasSetStream(h, s1);
  CHECK(p.run(h) == CUBLAS_STATUS_SUCCESS, "warm call");
  const std::vector<double> warm = p.result();
  CHECK(within_native_bound(p, warm), "warm call out of bound");
  if (expect_emulation()) CHECK(bitwise_equal(warm, ref), "warm call not emulated bitwise");

  // Capture on a stream, launch the graph twice; the result must equal the warm one.
  auto capture_and_check = [&](cublasHandle_t handle, cudaStream_t s, const char* what,
                               bool must_be_emulated) {
    p.reset();
    cublasSetStream(handle, s);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess, "%s: begin", what);
    const cublasStatus_t st = p.run(handle);
    const cudaError_t end = cudaStreamEndCapture(s, &graph);
    CHECK(st == CUBLAS_STATUS_SUCCESS, "%s: cublasDgemm in capture returned %d", what, int(st));
    CHECK(end == cudaSuccess, "%s: capture invalidated (%s)", what, cudaGetErrorString(end));
    if (end != cudaSuccess || st != CUBLAS_STATUS_SUCCESS) {
      (void)cudaGetLastError();
      return;
    }
    CHECK(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess, "%s: instantiate", what);
    for (int rep = 0; rep < 2; ++rep) {
      p.reset();
      CHECK(cudaGraphLaunch(exec, s) == cudaSuccess, "%s: launch", what);
      CHECK(cudaStreamSynchronize(s) == cudaSuccess, "%s: sync", what);
      const std::vector<double> got = p.result();
      CHECK(within_native_bound(p, got), "%s: replay %d out of bound", what, rep);
      if (must_be_emulated) CHECK(bitwise_equal(got, ref), "%s: replay %d not emulated", what, rep);
      std::printf("graph %s replay %d: %s\n", what, rep,
                  bitwise_equal(got, ref) ? "emulated (bitwise = host reference)"
                                          : "native result (within bound)");
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  };
  // A captured call is emulated with a fixed s only: a per-call choice (the default) cannot
  // synchronise under capture, and runs native.
  const char* moduli = std::getenv("OZDGEMM_MODULI");
  const bool fixed_s = moduli != nullptr && std::atoi(moduli) >= 2;
  capture_and_check(h, s1, "same stream, warm", expect_emulation() && fixed_s);
  capture_and_check(h, s2, "other stream, warm", false);
  cublasHandle_t cold;
  CHECK(cublasCreate(&cold) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  capture_and_check(cold, s2, "cold handle", false);
  // After the capture the handles still work eagerly.
  p.reset();
  cublasSetStream(cold, s1);
  CHECK(p.run(cold) == CUBLAS_STATUS_SUCCESS, "eager after capture");
  const std::vector<double> after = p.result();
  if (expect_emulation()) CHECK(bitwise_equal(after, ref), "eager call after capture not emulated");
  cublasDestroy(cold);
  cublasDestroy(h);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
  return failures != 0;
}

int wait_deadline(pid_t pid, int seconds) {
  const time_t end = time(nullptr) + seconds;
  int status = 0;
  while (time(nullptr) < end) {
    if (waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    usleep(20000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  std::fprintf(stderr, "FAIL: child hung for %d s: killed\n", seconds);
  return -1;
}

int mode_fork() {
  problem p(384);
  const std::vector<double> ref = p.reference();
  cublasHandle_t h;
  CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  CHECK(p.run(h) == CUBLAS_STATUS_SUCCESS, "parent call");
  const std::vector<double> before = p.result();
  if (expect_emulation()) CHECK(bitwise_equal(before, ref), "parent call not emulated");
  failures += host_dgemm_check("parent");
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    // CUDA is unusable here. The intercepted call must come back (the real cuBLAS's status,
    // whatever it is), and host DGEMM must be right.
    const cublasStatus_t st = p.run(h);
    std::printf("child: cublasDgemm on the parent's handle returned %d\n", int(st));
    const int bad = host_dgemm_check("child");
    std::fflush(stdout);
    std::exit(bad);
  }
  const int st = wait_deadline(pid, 120);
  CHECK(st == 0, "child exited with %d", st);
  p.reset();
  CHECK(p.run(h) == CUBLAS_STATUS_SUCCESS, "parent call after fork");
  const std::vector<double> after = p.result();
  if (expect_emulation()) CHECK(bitwise_equal(after, ref), "parent call after fork not emulated");
  CHECK(within_native_bound(p, after), "parent call after fork out of bound");
  cublasDestroy(h);
  return failures != 0;
}

int mode_exit(const char* mode) {
  const int n = 4096;
  auto* p = new problem(n);  // leaked on purpose: the process exits with work in flight
  cublasHandle_t h;
  cublasCreate(&h);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cublasSetStream(h, s);
  if (std::strcmp(mode, "exit-thread") == 0) {
    std::atomic<bool> started{false};
    std::thread([p, h, &started] {
      for (;;) {
        p->run(h);
        started = true;
      }
    }).detach();
    while (!started) std::this_thread::yield();
    std::printf("exit(0) while a thread enqueues emulated calls\n");
    std::fflush(stdout);
    std::exit(0);
  }
  for (int i = 0; i < 4; ++i) CHECK(p->run(h) == CUBLAS_STATUS_SUCCESS, "enqueue %d", i);
  if (std::strcmp(mode, "exit-destroyed") == 0) cublasDestroy(h);
  std::printf("%s: returning from main with 4 calls of n = %d in flight\n", mode, n);
  return failures != 0;
}

int mode_no_gpu() {
  int count = -1;
  const cudaError_t e = cudaGetDeviceCount(&count);
  std::printf("cudaGetDeviceCount: %s, %d\n", cudaGetErrorString(e), count);
  dgemm_fn native = native_dgemm();
  if (native == nullptr) return 77;
  cublasHandle_t h = nullptr;
  const cublasStatus_t cs = cublasCreate(&h);
  std::printf("cublasCreate: %d\n", int(cs));
  CHECK(cs != CUBLAS_STATUS_SUCCESS || e == cudaSuccess, "cublasCreate succeeded without a GPU");
  const double one = 1.0;
  double dummy[4] = {1, 2, 3, 4};
  const cublasStatus_t hooked =
      cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, dummy, 2, dummy, 2, &one, dummy, 2);
  const cublasStatus_t real =
      native(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, dummy, 2, dummy, 2, &one, dummy, 2);
  std::printf("cublasDgemm without a GPU: intercepted %d, native %d\n", int(hooked), int(real));
  CHECK(hooked == real, "intercepted status %d, native %d", int(hooked), int(real));
  CHECK(hooked != CUBLAS_STATUS_SUCCESS, "cublasDgemm without a GPU succeeded");
  failures += host_dgemm_check("no GPU");
  return failures != 0;
}

int mode_fault() {
  const char* inject = std::getenv("OZDGEMM_INJECT_FAULT");
  api_fn api = preloaded_symbol<api_fn>("ozdgemm_dgemm");
  if (inject == nullptr || api == nullptr || !expect_emulation()) {
    std::puts("needs OZDGEMM_INJECT_FAULT, OZDGEMM_MODE=emulate and the library preloaded");
    return 77;
  }
  // The status the C API states for each injected fault (README, "Guarantees").
  int want = -1;
  if (std::strncmp(inject, "alloc", 5) == 0) want = 3;   // OZDGEMM_STATUS_ALLOC_FAILED
  if (std::strncmp(inject, "cublas", 6) == 0) want = 5;  // OZDGEMM_STATUS_CUBLAS_ERROR
  if (std::strncmp(inject, "kernel", 6) == 0) want = 4;  // OZDGEMM_STATUS_CUDA_ERROR
  problem p(512);
  const std::vector<double> ref = p.reference();
  cublasHandle_t h;
  CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cublasSetStream(h, s);
  // 1. The C API: the stated status, C untouched.
  const double one = 1.0, half = 0.5;
  const int st = api(h, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.n, p.n, &one, p.da, p.n, p.db, p.n, &half,
                     p.dc, p.n, env_options());
  std::printf("C API under OZDGEMM_INJECT_FAULT=%s: status %d (want %d)\n", inject, st, want);
  CHECK(st == want, "C API status %d, want %d", st, want);
  CHECK(bitwise_equal(p.result(), p.c0), "C API wrote C on a failure");
  // 2. The intercepted call: native fallback, correct.
  CHECK(p.run(h) == CUBLAS_STATUS_SUCCESS, "intercepted call under a fault");
  const std::vector<double> fell_back = p.result();
  CHECK(within_native_bound(p, fell_back), "fallback result out of bound (scaled error %.3g)",
        p.scaled_error(fell_back));
  p.reset();
  const dgemm_fn native = native_dgemm();
  CHECK(native(h, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.n, p.n, &one, p.da, p.n, p.db, p.n, &half, p.dc,
               p.n) == CUBLAS_STATUS_SUCCESS,
        "native call");
  const std::vector<double> nat = p.result();
  std::printf("fallback result %s native cublasDgemm's\n",
              bitwise_equal(fell_back, nat) ? "bitwise equal to" : "differs (within bound) from");
  // 3. The faults are used up: the next call is emulated again, on another stream (the failed
  // calls' work must be ordered before it).
  cudaStream_t s2;
  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  cublasSetStream(h, s2);
  p.reset();
  CHECK(p.run(h) == CUBLAS_STATUS_SUCCESS, "call after the faults");
  CHECK(bitwise_equal(p.result(), ref), "call after the faults not emulated bitwise");
  cublasDestroy(h);
  cudaStreamDestroy(s);
  cudaStreamDestroy(s2);
  return failures != 0;
}

int mode_cap() {
  problem big(1024), small(16, 9);
  cublasHandle_t h;
  CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  CHECK(big.run(h) == CUBLAS_STATUS_SUCCESS, "large call");
  const std::vector<double> got = big.result();
  CHECK(within_native_bound(big, got), "large call out of bound");
  // (The log shows it went native for the cap: the test greps for it.)
  CHECK(small.run(h) == CUBLAS_STATUS_SUCCESS, "small call");
  const std::vector<double> s = small.result();
  CHECK(within_native_bound(small, s), "small call out of bound");
  if (expect_emulation()) CHECK(bitwise_equal(s, small.reference()), "small call not emulated");
  cublasDestroy(h);
  return failures != 0;
}

int mode_sync_beside() {
  if (!expect_emulation()) {
    std::puts("needs OZDGEMM_MODE=emulate and the library preloaded");
    return 77;
  }
  std::vector<std::unique_ptr<problem>> problems;  // problem owns device memory: not copied
  for (const int n : {96, 160, 256, 384}) problems.push_back(std::make_unique<problem>(n, 100 + n));
  std::vector<std::vector<double>> refs;
  for (const auto& p : problems) refs.push_back(p->reference());
  cublasHandle_t h;
  CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cublasSetStream(h, s);
  std::atomic<bool> done{false};
  std::atomic<long> syncs{0};
  std::thread other([&] {
    while (!done.load()) {
      cudaDeviceSynchronize();
      cublasHandle_t t;
      if (cublasCreate(&t) == CUBLAS_STATUS_SUCCESS) cublasDestroy(t);
      syncs.fetch_add(1);
    }
  });
  const double one = 1.0, half = 0.5;
  long calls = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  for (size_t round = 0; std::chrono::steady_clock::now() < end && failures == 0; ++round) {
    const problem& p = *problems[round % problems.size()];
    const size_t bytes = p.c0.size() * 8;
    double* c = nullptr;  // a new C each call: new arguments for the library every time
    CHECK(cudaMalloc(&c, bytes) == cudaSuccess, "cudaMalloc");
    cudaMemcpyAsync(c, p.c0.data(), bytes, cudaMemcpyHostToDevice, s);
    CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.n, p.n, &one, p.da, p.n, p.db, p.n, &half,
                      c, p.n) == CUBLAS_STATUS_SUCCESS,
          "call %ld", calls);
    std::vector<double> got(p.c0.size());
    cudaMemcpyAsync(got.data(), c, bytes, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    cudaFree(c);
    CHECK(bitwise_equal(got, refs[round % problems.size()]), "call %ld (n = %d) not bitwise", calls,
          p.n);
    ++calls;
  }
  done.store(true);
  other.join();
  std::printf("%ld emulated calls beside %ld device synchronisations and handle cycles\n", calls,
              syncs.load());
  CHECK(calls > 0 && syncs.load() > 0, "nothing ran side by side");
  cublasDestroy(h);
  cudaStreamDestroy(s);
  return failures != 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "no-gpu") == 0) return mode_no_gpu();
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  if (std::strcmp(mode, "graph") == 0) return mode_graph();
  if (std::strcmp(mode, "fork") == 0) return mode_fork();
  if (std::strncmp(mode, "exit-", 5) == 0) return mode_exit(mode);
  if (std::strcmp(mode, "fault") == 0) return mode_fault();
  if (std::strcmp(mode, "cap") == 0) return mode_cap();
  if (std::strcmp(mode, "sync-beside") == 0) return mode_sync_beside();
  std::fprintf(stderr,
               "usage: %s graph|fork|exit-in-flight|exit-destroyed|exit-thread|no-gpu|"
               "fault|cap|sync-beside\n",
               argv[0]);
  return 2;
}
