// One of several independent processes sharing one GPU under LD_PRELOAD=libozdgemm.so, as MPI
// ranks do (gpu_share.sh starts 4-8 of them at once). None of them owns the device: each one
// only allocates what it needs, and the library in each sizes its workspaces against
// OZDGEMM_MAX_WORKSPACE or 90% of the memory free at that moment.
//
//   gpu_share_client SECONDS [THREADS] [SEED]
//     THREADS (default 2) threads, each with its own cuBLAS handle and stream, call until the
//     deadline: a cublasDgemm on device memory and a host DGEMM (dgemm_ and cblas_dgemm by
//     turns) per round, on shapes from 1 x 1 x 1 to 2048 x 2048 x 2048, both transposes.
//   gpu_share_client hog LEAVE_MIB SECONDS READY_FILE
//     takes all but LEAVE_MIB of the free device memory, creates READY_FILE, holds the memory
//     for SECONDS (or until READY_FILE is removed): the others then run short of memory.
//
// The inputs are integers times powers of two (per row of A, per column of B), alpha and beta
// small integers: every product and partial sum is exact in FP64, so any correct DGEMM, the
// native one or the emulation (whose moduli hold far more than the 27 bits of these sums),
// returns the exact result, bit for bit, whichever way the library sent the call. So a call
// refused for lack of memory (native) and an emulated one are checked alike: exact, against
// int64 sums (m n k <= 2^27) or two Freivalds products (larger: C x = alpha A (B x) + beta C0 x
// with x in {-1, 0, 1}^n, exact in int64). The log says which way each call went.
// Exit status: 0 all exact, 1 a wrong result or a failed call, 77 no CUDA device.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

extern "C" void dgemm_(const char* transa, const char* transb, const int* m, const int* n,
                       const int* k, const double* alpha, const double* a, const int* lda,
                       const double* b, const int* ldb, const double* beta, double* c,
                       const int* ldc, size_t la, size_t lb);

namespace {

using cblas_fn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*,
                          int, double, double*, int);

std::atomic<long long> device_calls{0}, host_calls{0}, failures{0};
std::mutex print_mutex;

void fail(const char* what, int thread, int problem, const char* detail = "") {
  if (failures++ < 10) {
    std::lock_guard<std::mutex> lock(print_mutex);
    std::fprintf(stderr, "FAIL pid %d thread %d problem %d: %s %s\n", int(getpid()), thread,
                 problem, what, detail);
  }
}

// C = alpha op(A) op(B) + beta C0 with A(i, l) = ai(i, l) 2^ea[i], B(l, j) = bi(l, j) 2^eb[j],
// C0(i, j) = ci(i, j) 2^(ea[i] + eb[j]) (NaN when beta = 0: C must not be read).
struct problem {
  char ta, tb;
  int m, n, k, lda, ldb;
  int alpha, beta;
  std::vector<int> ai, bi, ci, ea, eb;  // ai, bi in op() order: ai[i * k + l], bi[l * n + j]
  std::vector<double> a, b, c0;         // column-major as passed, op() applied by the call
  double *da = nullptr, *db = nullptr;
};

problem make_problem(int m, int n, int k, char ta, char tb, int alpha, int beta, uint64_t seed) {
  problem p{ta, tb, m, n, k, ta == 'N' ? m : k, tb == 'N' ? k : n, alpha, beta,
            {}, {}, {}, {}, {}, {}, {}, {}};
  std::mt19937_64 g(seed);
  auto uniform = [&](int lo, int hi) { return lo + int(g() % uint64_t(hi - lo + 1)); };
  p.ea.resize(m);
  p.eb.resize(n);
  for (int& e : p.ea) e = uniform(-6, 6);
  for (int& e : p.eb) e = uniform(-6, 6);
  p.ai.resize(size_t(m) * k);
  p.bi.resize(size_t(k) * n);
  p.ci.resize(size_t(m) * n);
  for (int& v : p.ai) v = uniform(-127, 127);
  for (int& v : p.bi) v = uniform(-127, 127);
  for (int& v : p.ci) v = uniform(-1000, 1000);
  p.a.resize(size_t(m) * k);
  p.b.resize(size_t(k) * n);
  p.c0.resize(size_t(m) * n);
  for (int i = 0; i < m; ++i)
    for (int l = 0; l < k; ++l)
      p.a[ta == 'N' ? size_t(l) * p.lda + i : size_t(i) * p.lda + l] =
          std::ldexp(double(p.ai[size_t(i) * k + l]), p.ea[i]);
  for (int l = 0; l < k; ++l)
    for (int j = 0; j < n; ++j)
      p.b[tb == 'N' ? size_t(j) * p.ldb + l : size_t(l) * p.ldb + j] =
          std::ldexp(double(p.bi[size_t(l) * n + j]), p.eb[j]);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      p.c0[size_t(j) * m + i] =
          beta == 0 ? NAN : std::ldexp(double(p.ci[size_t(i) * n + j]), p.ea[i] + p.eb[j]);
  return p;
}

// C(i, j) / 2^(ea[i] + eb[j]) as an integer, or false if it is not one (a wrong result).
bool scaled(const problem& p, const double* c, int i, int j, int64_t* v) {
  const double s = std::ldexp(c[size_t(j) * p.m + i], -(p.ea[i] + p.eb[j]));
  if (!(std::fabs(s) < 0x1p62) || s != std::trunc(s)) return false;
  *v = int64_t(s);
  return true;
}

bool exact(const problem& p, const double* c, uint64_t seed) {
  int64_t v = 0;
  if (int64_t(p.m) * p.n * p.k <= (int64_t(1) << 27)) {
    for (int i = 0; i < p.m; ++i)
      for (int j = 0; j < p.n; ++j) {
        int64_t s = 0;
        for (int l = 0; l < p.k; ++l)
          s += int64_t(p.ai[size_t(i) * p.k + l]) * p.bi[size_t(l) * p.n + j];
        const int64_t want =
            p.alpha * s + (p.beta == 0 ? 0 : int64_t(p.beta) * p.ci[size_t(i) * p.n + j]);
        if (!scaled(p, c, i, j, &v) || v != want) return false;
      }
    return true;
  }
  std::mt19937_64 g(seed);
  std::vector<int64_t> x(p.n), bx(p.k);
  for (int trial = 0; trial < 2; ++trial) {
    for (int64_t& e : x) e = int64_t(g() % 3) - 1;
    std::fill(bx.begin(), bx.end(), 0);
    for (int l = 0; l < p.k; ++l)
      for (int j = 0; j < p.n; ++j) bx[l] += p.bi[size_t(l) * p.n + j] * x[j];
    for (int i = 0; i < p.m; ++i) {
      int64_t want = 0, got = 0;
      for (int l = 0; l < p.k; ++l) want += p.ai[size_t(i) * p.k + l] * bx[l];
      want *= p.alpha;
      for (int j = 0; j < p.n; ++j) {
        if (!scaled(p, c, i, j, &v)) return false;
        got += v * x[j];
        if (p.beta != 0) want += int64_t(p.beta) * p.ci[size_t(i) * p.n + j] * x[j];
      }
      if (got != want) return false;
    }
  }
  return true;
}

cublasOperation_t op(char t) { return t == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T; }

void worker(int id, std::vector<problem>& probs, std::chrono::steady_clock::time_point deadline,
            cblas_fn cblas, uint64_t seed) {
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return fail("cublasCreate", id, -1);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cublasSetStream(h, stream);
  size_t max_c = 0;
  for (const problem& p : probs) max_c = std::max(max_c, p.c0.size());
  double* dc = nullptr;
  if (cudaMalloc(&dc, max_c * 8) != cudaSuccess) return fail("cudaMalloc of C", id, -1);
  std::vector<double> c(max_c);
  std::mt19937_64 g(seed + 7919 * id);
  for (long long round = 0; std::chrono::steady_clock::now() < deadline; ++round) {
    const int w = int(g() % probs.size());
    const problem& p = probs[w];
    const double alpha = p.alpha, beta = p.beta;
    // Device call.
    cudaMemcpyAsync(dc, p.c0.data(), p.c0.size() * 8, cudaMemcpyHostToDevice, stream);
    const cublasStatus_t st = cublasDgemm(h, op(p.ta), op(p.tb), p.m, p.n, p.k, &alpha, p.da,
                                          p.lda, p.db, p.ldb, &beta, dc, p.m);
    ++device_calls;
    if (st != CUBLAS_STATUS_SUCCESS) {
      fail("cublasDgemm status", id, w, cublasGetStatusString(st));
      continue;
    }
    cudaMemcpyAsync(c.data(), dc, p.c0.size() * 8, cudaMemcpyDeviceToHost, stream);
    const cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) fail("stream sync", id, w, cudaGetErrorString(e));
    else if (!exact(p, c.data(), g())) fail("device result not exact", id, w);
    // Host call on another problem, dgemm_ and cblas_dgemm by turns.
    const int v = int(g() % probs.size());
    const problem& q = probs[v];
    std::copy(q.c0.begin(), q.c0.end(), c.begin());
    const double qa = q.alpha, qb = q.beta;
    if (cblas != nullptr && round % 2 == 1) {
      cblas(102, q.ta == 'N' ? 111 : 112, q.tb == 'N' ? 111 : 112, q.m, q.n, q.k, qa,
            q.a.data(), q.lda, q.b.data(), q.ldb, qb, c.data(), q.m);
    } else {
      dgemm_(&q.ta, &q.tb, &q.m, &q.n, &q.k, &qa, q.a.data(), &q.lda, q.b.data(), &q.ldb, &qb,
             c.data(), &q.m, 1, 1);
    }
    ++host_calls;
    if (!exact(q, c.data(), g())) fail("host result not exact", id, v);
  }
  cudaFree(dc);
  cublasDestroy(h);
  cudaStreamDestroy(stream);
}

int hog(size_t leave_mib, double seconds, const char* ready_file) {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return 77;
  const size_t leave = leave_mib << 20;
  std::vector<void*> chunks;
  size_t taken = 0;
  // 256 MiB at a time, so that what the driver cannot give in one piece is still taken.
  for (size_t chunk = size_t(256) << 20; free_bytes > leave + taken + chunk;) {
    void* p = nullptr;
    if (cudaMalloc(&p, chunk) != cudaSuccess) break;
    chunks.push_back(p);
    taken += chunk;
  }
  cudaMemGetInfo(&free_bytes, &total);
  std::printf("hog: holds %zu MiB, %zu MiB of %zu MiB free\n", taken >> 20, free_bytes >> 20,
              total >> 20);
  std::fflush(stdout);
  if (FILE* f = std::fopen(ready_file, "w")) std::fclose(f);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end && access(ready_file, F_OK) == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (void* p : chunks) cudaFree(p);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  if (argc > 1 && std::strcmp(argv[1], "hog") == 0) {
    if (argc != 5) {
      std::fprintf(stderr, "usage: %s hog LEAVE_MIB SECONDS READY_FILE\n", argv[0]);
      return 2;
    }
    return hog(std::strtoull(argv[2], nullptr, 10), std::atof(argv[3]), argv[4]);
  }
  const double seconds = argc > 1 ? std::atof(argv[1]) : 20.0;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : uint64_t(getpid());
  int mode = -1;
  cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, 0);
  const auto cblas = reinterpret_cast<cblas_fn>(dlsym(RTLD_DEFAULT, "cblas_dgemm"));

  // Small to large, both transposes, alpha and beta small integers (beta = 0: C0 is NaN).
  const int shapes[][3] = {{1, 1, 1},       {17, 19, 23},     {64, 64, 64},
                           {256, 256, 256}, {300, 200, 500},  {127, 129, 4096},
                           {1024, 768, 512}, {1024, 1024, 1024}, {2048, 2048, 2048}};
  const char* const all_ops[] = {"NN", "TN", "NT", "TT"};
  const int nshapes = int(sizeof shapes / sizeof shapes[0]);
  std::vector<problem> probs;
  for (int i = 0; i < nshapes; ++i) {
    const char* ops = all_ops[(i + seed) % 4];
    probs.push_back(make_problem(shapes[i][0], shapes[i][1], shapes[i][2], ops[0], ops[1],
                                 i % 3 == 0 ? 1 : i % 3 == 1 ? -1 : 2, i % 3 == 0 ? 0 : i % 2 + 1,
                                 seed * 1000 + i));
  }
  for (problem& p : probs) {
    if (cudaMalloc(&p.da, p.a.size() * 8) != cudaSuccess ||
        cudaMalloc(&p.db, p.b.size() * 8) != cudaSuccess) {
      std::fprintf(stderr, "FAIL: cudaMalloc of the inputs\n");
      return 1;
    }
    cudaMemcpy(p.da, p.a.data(), p.a.size() * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(p.db, p.b.data(), p.b.size() * 8, cudaMemcpyHostToDevice);
  }

  const auto t0 = std::chrono::steady_clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(seconds));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(worker, t, std::ref(probs), deadline, cblas, seed);
  for (auto& th : pool) th.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (problem& p : probs) {
    cudaFree(p.da);
    cudaFree(p.db);
  }
  size_t free_bytes = 0, total = 0;
  cudaMemGetInfo(&free_bytes, &total);
  std::printf(
      "share: pid %d, compute mode %d, %d threads: %lld device + %lld host calls in %.1f s, "
      "%lld failures; %zu of %zu MiB free at the end\n",
      int(getpid()), mode, threads, device_calls.load(), host_calls.load(), wall,
      failures.load(), free_bytes >> 20, total >> 20);
  return failures.load() == 0 && device_calls.load() > 0 && host_calls.load() > 0 ? 0 : 1;
}
