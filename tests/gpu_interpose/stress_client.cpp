// Load test of the interposer: a plain cuBLAS program run under LD_PRELOAD=libozdgemm.so.
// T threads (argv[1], default 8), each with H handles (argv[2], default 3) and two streams,
// issue cublasDgemm calls of mixed shapes, from 1x1x1 to 384x256x320 and k up to 4096, with
// host cblas_dgemm calls in between; every few rounds a thread destroys one of its handles and
// creates a new one while the other threads keep calling. Two calls go out on two streams of
// the same handle before the thread synchronises (the workspace they share must be ordered).
// Every result is checked:
//   - OZDGEMM_MODE=emulate: bitwise equal to the library's host reference (computed once per
//     problem before the run), for device and host calls alike;
//   - otherwise (auto, with OZDGEMM_MIN_DIM small, so calls go both ways): within
//     16 (k + 2) 2^-52 (|alpha| |A||B| + |beta C|) of a long double reference (loose enough for
//     any sound FP64 GEMM and the s = 14 emulation, tight enough to catch a race or a wrong
//     operand).
// The run stops at an internal deadline (argv[3] seconds, default 20) and ctest's TIMEOUT
// bounds it from outside. Prints threads x calls and the wall time.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "client_support.hpp"

namespace {


std::atomic<long long> device_calls{0}, host_calls{0}, handles_recycled{0};
std::mutex print_mutex;

void fail(const char* what, int thread, int shape) {
  if (failures++ < 10) {
    std::lock_guard<std::mutex> lock(print_mutex);
    std::fprintf(stderr, "FAIL thread %d shape %d: %s\n", thread, shape, what);
  }
}

// One problem: C = alpha op(A) op(B) + beta C0, its reference and its error scale.
struct problem {
  char ta, tb;
  int m, n, k, lda, ldb;
  double alpha, beta;
  std::vector<double> a, b, c0, ref;  // ref: host reference (emulate) or long double exact
  std::vector<double> host_ref;       // emulate: a host call's reference (its own target)
  std::vector<double> bound;          // per element, when not bitwise
  double *da = nullptr, *db = nullptr;
};

problem make_problem(int m, int n, int k, char ta, char tb, double beta, uint64_t seed,
                     bool bitwise) {
  problem p{ta, tb, m, n, k, ta == 'N' ? m : k, tb == 'N' ? k : n, 1.0, beta, {}, {}, {}, {}, {}};
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  p.alpha = 0.5 + u(g);
  p.a.resize(size_t(p.lda) * (ta == 'N' ? k : m));
  p.b.resize(size_t(p.ldb) * (tb == 'N' ? n : k));
  p.c0.resize(size_t(m) * n);
  for (double& e : p.a) e = u(g) * std::exp2(int(g() % 9) - 4);
  for (double& e : p.b) e = u(g);
  for (double& e : p.c0) e = beta == 0.0 ? NAN : u(g);  // beta = 0 must not read C
  auto A = [&](int i, int l) {
    return ta == 'N' ? p.a[size_t(l) * p.lda + i] : p.a[size_t(i) * p.lda + l];
  };
  auto B = [&](int l, int j) {
    return tb == 'N' ? p.b[size_t(j) * p.ldb + l] : p.b[size_t(l) * p.ldb + j];
  };
  if (bitwise) {
    p.ref = p.c0;
    auto ref = preloaded_symbol<ref_fn>("ozdgemm_dgemm_reference");
    ref(ta, tb, m, n, k, p.alpha, p.a.data(), p.lda, p.b.data(), p.ldb, beta, p.ref.data(), m,
        env_options());
    p.host_ref = p.c0;
    ref(ta, tb, m, n, k, p.alpha, p.a.data(), p.lda, p.b.data(), p.ldb, beta, p.host_ref.data(),
        m, host_env_options());
  } else {
    p.ref.resize(size_t(m) * n);
    p.bound.resize(size_t(m) * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        long double s = 0, sa = 0;
        for (int l = 0; l < k; ++l) {
          const long double x = (long double)A(i, l) * B(l, j);
          s += x;
          sa += std::fabs(x);
        }
        const long double c = beta == 0.0 ? 0.0L : (long double)beta * p.c0[size_t(j) * m + i];
        p.ref[size_t(j) * m + i] = double((long double)p.alpha * s + c);
        p.bound[size_t(j) * m + i] = double(
            (16 * (k + 2) * 0x1p-52L) * (std::fabs((long double)p.alpha) * sa + std::fabs(c)) +
            0x1p-1000L);
      }
  }
  cudaMalloc(&p.da, p.a.size() * 8);
  cudaMalloc(&p.db, p.b.size() * 8);
  cudaMemcpy(p.da, p.a.data(), p.a.size() * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(p.db, p.b.data(), p.b.size() * 8, cudaMemcpyHostToDevice);
  return p;
}

bool matches(const problem& p, const std::vector<double>& c, bool bitwise, bool host = false) {
  if (bitwise) return std::memcmp(c.data(), (host ? p.host_ref : p.ref).data(), c.size() * 8) == 0;
  for (size_t e = 0; e < c.size(); ++e)
    if (!(std::fabs(c[e] - p.ref[e]) <= p.bound[e])) return false;
  return true;
}

cublasOperation_t op(char t) { return t == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T; }

void worker(int id, int handles_per_thread, const std::vector<problem>& probs, bool bitwise,
            std::chrono::steady_clock::time_point deadline, cblas_fn cblas) {
  std::vector<cublasHandle_t> handles(handles_per_thread);
  for (auto& h : handles)
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return fail("cublasCreate", id, -1);
  cudaStream_t streams[2];
  for (auto& s : streams) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  size_t max_c = 0;
  for (const problem& p : probs) max_c = std::max(max_c, p.c0.size());
  double* dc[2];
  for (auto& d : dc) cudaMalloc(&d, max_c * 8);
  std::vector<double> host_c(max_c), back(max_c);
  std::mt19937_64 g(1000 + id);
  for (long long round = 0; std::chrono::steady_clock::now() < deadline; ++round) {
    cublasHandle_t h = handles[round % handles_per_thread];
    int which[2];
    for (int t = 0; t < 2; ++t) {
      which[t] = int(g() % probs.size());
      const problem& p = probs[which[t]];
      cudaMemcpyAsync(dc[t], p.c0.data(), p.c0.size() * 8, cudaMemcpyHostToDevice, streams[t]);
      cublasSetStream(h, streams[t]);
      const cublasStatus_t st = cublasDgemm(h, op(p.ta), op(p.tb), p.m, p.n, p.k, &p.alpha, p.da,
                                            p.lda, p.db, p.ldb, &p.beta, dc[t], p.m);
      if (st != CUBLAS_STATUS_SUCCESS) fail("cublasDgemm status", id, which[t]);
      ++device_calls;
    }
    for (int t = 0; t < 2; ++t) {
      const problem& p = probs[which[t]];
      cudaMemcpyAsync(back.data(), dc[t], p.c0.size() * 8, cudaMemcpyDeviceToHost, streams[t]);
      if (cudaStreamSynchronize(streams[t]) != cudaSuccess) fail("stream sync", id, which[t]);
      if (!matches(p, std::vector<double>(back.begin(), back.begin() + p.c0.size()), bitwise))
        fail("device result wrong", id, which[t]);
    }
    if (cblas != nullptr && round % 3 == 0) {  // a host call in between
      const int w = int(g() % probs.size());
      const problem& p = probs[w];
      std::copy(p.c0.begin(), p.c0.end(), host_c.begin());
      cblas(102, p.ta == 'N' ? 111 : 112, p.tb == 'N' ? 111 : 112, p.m, p.n, p.k, p.alpha,
            p.a.data(), p.lda, p.b.data(), p.ldb, p.beta, host_c.data(), p.m);
      if (!matches(p, std::vector<double>(host_c.begin(), host_c.begin() + p.c0.size()), bitwise,
                   true))
        fail("host result wrong", id, w);
      ++host_calls;
    }
    if (round % 7 == 6) {  // recycle a handle while the other threads keep calling
      cublasHandle_t& victim = handles[g() % handles_per_thread];
      cublasDestroy(victim);
      if (cublasCreate(&victim) != CUBLAS_STATUS_SUCCESS) return fail("cublasCreate", id, -1);
      ++handles_recycled;
    }
  }
  for (auto& h : handles) cublasDestroy(h);
  for (auto& d : dc) cudaFree(d);
  for (auto& s : streams) cudaStreamDestroy(s);
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  const int threads = argc > 1 ? std::atoi(argv[1]) : 8;
  const int handles = argc > 2 ? std::atoi(argv[2]) : 3;
  const double seconds = argc > 3 ? std::atof(argv[3]) : 20.0;
  const char* mode = std::getenv("OZDGEMM_MODE");
  const bool preloaded = dlsym(RTLD_DEFAULT, "ozdgemm_dgemm_reference") != nullptr;
  const bool bitwise = preloaded && mode != nullptr && std::strcmp(mode, "emulate") == 0;
  const auto cblas = preloaded_symbol<cblas_fn>("cblas_dgemm");

  // Mixed shapes: tiny ones (native under auto with OZDGEMM_MIN_DIM), odd ones, long k, and a
  // few large enough to be emulated, in every transpose, with beta zero and not.
  const int shapes[][3] = {{1, 1, 1},       {1, 37, 5},      {33, 1, 70},      {17, 19, 23},
                           {64, 64, 64},    {100, 80, 300},  {127, 129, 4096}, {256, 256, 256},
                           {300, 200, 500}, {384, 256, 320}, {512, 2, 1000},   {3, 512, 2048}};
  const auto t_setup = std::chrono::steady_clock::now();
  const int nshapes = static_cast<int>(sizeof shapes / sizeof shapes[0]);
  const char* const all_ops[] = {"NN", "TN", "NT", "TT"};
  std::vector<problem> probs(nshapes * 4);
  {
    // The references take a while (the host reference runs s products): one thread per problem.
    std::vector<std::thread> prep;
    for (int i = 0; i < nshapes * 4; ++i)
      prep.emplace_back([&, i] {
        const int* s = shapes[i / 4];
        const char* ops = all_ops[i % 4];
        probs[i] =
            make_problem(s[0], s[1], s[2], ops[0], ops[1], i % 2 ? 0.0 : -0.75, i + 1, bitwise);
      });
    for (auto& t : prep) t.join();
  }
  std::printf("%zu problems prepared in %.1f s (%s check)\n", probs.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t_setup).count(),
              bitwise ? "bitwise host-reference" : "error-bound");

  const auto t0 = std::chrono::steady_clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(seconds));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(worker, t, handles, std::cref(probs), bitwise, deadline, cblas);
  for (auto& th : pool) th.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (problem& p : probs) {
    cudaFree(p.da);
    cudaFree(p.db);
  }
  std::printf(
      "stress: %d threads x %d handles x 2 streams: %lld device calls + %lld host calls "
      "(%lld per thread), %lld handles recycled, %.1f s wall, %lld failures\n",
      threads, handles, device_calls.load(), host_calls.load(),
      (device_calls.load() + host_calls.load()) / std::max(threads, 1), handles_recycled.load(),
      wall, static_cast<long long>(failures.load()));
  // The deadline is checked between rounds: a round must not overrun it by much.
  if (wall > seconds + 60) {
    std::fprintf(stderr, "FAIL: ran %.1f s past a %.1f s deadline\n", wall, seconds);
    return 1;
  }
  return failures.load() == 0 && device_calls.load() > 0 ? 0 : 1;
}
