// A plain CUDA program that knows nothing of ozdgemm: it calls cublasDgemm (v2 and _64),
// cublasGemmEx (FP64) and the legacy handle-less cublasDgemm, from 8 threads with their own
// handles and streams. Run under LD_PRELOAD=libozdgemm.so with OZDGEMM_MODE=emulate, every
// result must equal, bit for bit, the library's host reference with the same settings
// (looked up with dlsym, so the program itself does not link ozdgemm); without the library it
// only checks against a double-double reference. It also checks that the handle's pointer
// mode, stream and math mode are untouched and that invalid arguments get cuBLAS's status.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "certified_result.hpp"
#include "client_support.hpp"

extern "C" cublasStatus_t cublasInit(void);
extern "C" cublasStatus_t cublasSetKernelStream(cudaStream_t stream);
extern "C" void legacy_dgemm(char, char, int, int, int, double, const double*, int, const double*,
                             int, double, double*, int) __asm__("cublasDgemm");

namespace {

// The host reference of the preloaded library, if any.
ref_fn reference() { return preloaded_symbol<ref_fn>("ozdgemm_dgemm_reference"); }

bool expect_emulation() {
  const char* m = std::getenv("OZDGEMM_MODE");
  return m != nullptr && std::strcmp(m, "emulate") == 0 && reference() != nullptr;
}

double dd_entry(const std::vector<double>& a, const std::vector<double>& b, int m, int k, int i,
                int j) {
  double hi = 0, lo = 0;
  for (int l = 0; l < k; ++l) {
    const double x = a[i + l * m], y = b[l + j * k];
    const double p = x * y, pe = std::fma(x, y, -p);
    const double s = hi + p, bb = s - hi, se = (hi - (s - bb)) + (p - bb);
    hi = s;
    lo += se + pe;
  }
  return hi + lo;
}

enum class entry { v2, v2_64, gemm_ex, legacy };
const char* name(entry e) {
  return e == entry::v2 ? "cublasDgemm_v2"
         : e == entry::v2_64 ? "cublasDgemm_v2_64"
         : e == entry::gemm_ex ? "cublasGemmEx"
                               : "cublasDgemm(legacy)";
}

void one_case(cublasHandle_t h, cudaStream_t st, entry e, int m, int n, int k, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  std::vector<double> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n),
      c(static_cast<size_t>(m) * n);
  for (double& x : a) x = nd(g) * std::exp(0.5 * nd(g));
  for (double& x : b) x = nd(g);
  for (double& x : c) x = nd(g);
  const double alpha = 1.25, beta = -0.5;
  double *da, *db, *dc;
  cudaMalloc(&da, a.size() * 8);
  cudaMalloc(&db, b.size() * 8);
  cudaMalloc(&dc, c.size() * 8);
  cudaMemcpy(da, a.data(), a.size() * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(dc, c.data(), c.size() * 8, cudaMemcpyHostToDevice);
  cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
  switch (e) {
    case entry::v2:
      s = cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, db, k, &beta, dc, m);
      break;
    case entry::v2_64:
      s = cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, db, k, &beta, dc, m);
      break;
    case entry::gemm_ex:
      s = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_64F, m, db,
                       CUDA_R_64F, k, &beta, dc, CUDA_R_64F, m, CUBLAS_COMPUTE_64F,
                       CUBLAS_GEMM_DEFAULT);
      break;
    case entry::legacy:
      legacy_dgemm('N', 'N', m, n, k, alpha, da, m, db, k, beta, dc, m);
      cudaDeviceSynchronize();
      break;
  }
  CHECK(s == CUBLAS_STATUS_SUCCESS, "%s returned %d", name(e), static_cast<int>(s));
  if (e != entry::legacy) cudaStreamSynchronize(st);
  std::vector<double> got(c.size());
  cudaMemcpy(got.data(), dc, got.size() * 8, cudaMemcpyDeviceToHost);
  if (expect_emulation()) {
    // An eager certified call may also give the reference at a larger count or the FP64
    // fallback (certified_result.hpp); the shape's other threads' data decide which.
    const host_gemm_case hc{'N', 'N', m, n, k, alpha, a.data(), m, b.data(), k, beta, &c, m};
    const auto same = [](const std::vector<double>& x, const std::vector<double>& y) {
      return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * 8) == 0;
    };
    const std::string which = certified_result(reference(), env_options(), hc, {}, got, same);
    int bad = 0;
    if (which.empty()) {
      std::vector<double> ref = c;
      reference()('N', 'N', m, n, k, alpha, a.data(), m, b.data(), k, beta, ref.data(), m,
                  env_options());
      for (size_t i = 0; i < ref.size(); ++i) bad += std::memcmp(&ref[i], &got[i], 8) != 0;
    }
    CHECK(!which.empty(), "%s %dx%dx%d: %d elements differ from the host reference (and from "
          "every result a certified call may give)", name(e), m, n, k, bad);
  }
  // Always: close to a double-double reference (native accuracy or better at s >= 14).
  double worst = 0;
  for (int t = 0; t < 64; ++t) {
    const int i = static_cast<int>(g() % m), j = static_cast<int>(g() % n);
    double absab = 0;
    for (int l = 0; l < k; ++l) absab += std::fabs(a[i + l * m] * b[l + j * k]);
    const double r = alpha * dd_entry(a, b, m, k, i, j) + beta * c[i + j * m];
    worst = std::max(worst, std::fabs(got[i + j * m] - r) / (std::fabs(alpha) * absab + std::fabs(beta * c[i + j * m])));
  }
  CHECK(worst < 1e-13, "%s %dx%dx%d: error %.3e relative to |alpha||A||B| + |beta C|", name(e), m,
        n, k, worst);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
}

void worker(int id, int iterations) {
  cublasHandle_t h;
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  cublasCreate(&h);
  cublasSetStream(h, st);
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
  cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
  // Small enough that the host reference (O(s m n k) integer loops) stays within seconds.
  const int sizes[][3] = {{256, 192, 320}, {300, 200, 257}, {384, 384, 384}, {177, 129, 513}};
  for (int it = 0; it < iterations; ++it) {
    const auto& sz = sizes[(id + it) % 4];
    const entry e = static_cast<entry>((id + it) % 3);
    one_case(h, st, e, sz[0], sz[1], sz[2], 1000 * id + it);
  }
  // The handle is as the program left it.
  cudaStream_t st2;
  cublasPointerMode_t pm;
  cublasMath_t mm;
  cublasGetStream(h, &st2);
  cublasGetPointerMode(h, &pm);
  cublasGetMathMode(h, &mm);
  CHECK(st2 == st && pm == CUBLAS_POINTER_MODE_HOST && mm == CUBLAS_DEFAULT_MATH,
        "handle state changed");
  // Invalid arguments: cuBLAS's own status.
  const double one = 1, zero = 0;
  CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 512, 512, 512, &one, nullptr, 100, nullptr, 512,
                    &zero, nullptr, 512) == CUBLAS_STATUS_INVALID_VALUE,
        "lda < m must give CUBLAS_STATUS_INVALID_VALUE");
  cublasDestroy(h);
  cudaStreamDestroy(st);
}

// The legacy cublasDgemm must run on the stream set with cublasSetKernelStream. That stream is
// held back by a one-thread kernel spinning on a flag in mapped host memory; the product must
// not appear (read on another stream, whose copy the spinning kernel does not hold back) until
// the flag is set. On the legacy default stream it would: a non-blocking stream does not hold
// that one back. (A blocking host function cannot be used: the runtime's copies wait for it.)
__global__ void spin_until_set(volatile int* flag) {
  while (*flag == 0) {
  }
}

// Holds its stream for about `ns` nanoseconds of the GPU's global timer.
__global__ void spin_for(long long ns) {
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (;;) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (static_cast<long long>(t - t0) >= ns) break;
  }
}

void legacy_kernel_stream_case() {
  const int n = 256;
  cudaStream_t s, reader;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking);
  std::vector<double> ones(n * n, 1.0), got(n * n, -1.0);
  double *da, *db, *dc, *pinned;
  int *flag, *flag_dev;
  cudaMalloc(&da, n * n * 8);
  cudaMalloc(&db, n * n * 8);
  cudaMalloc(&dc, n * n * 8);
  cudaMallocHost(&pinned, n * n * 8);
  cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped);
  cudaHostGetDevicePointer(&flag_dev, flag, 0);
  *reinterpret_cast<volatile int*>(flag) = 0;
  cudaMemcpy(da, ones.data(), n * n * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(db, ones.data(), n * n * 8, cudaMemcpyHostToDevice);
  cudaMemset(dc, 0, n * n * 8);
  // The same call once first, unheld: every kernel it needs is then loaded. (With lazy module
  // loading, the first launch of a kernel waits for running kernels, the spinning one included,
  // and would never return.)
  legacy_dgemm('N', 'N', n, n, n, 1.0, da, n, db, n, 0.0, dc, n);
  cudaDeviceSynchronize();
  // Under a per-call choice (the library's default) a held call waits for its stream up to a
  // limit and then runs native cuBLAS: load that route's kernel too, behind a kernel that holds
  // the stream for longer than the limit and then releases it by itself.
  CHECK(cublasSetKernelStream(s) == CUBLAS_STATUS_SUCCESS, "cublasSetKernelStream failed");
  spin_for<<<1, 1, 0, s>>>(2'000'000'000ll);
  legacy_dgemm('N', 'N', n, n, n, 1.0, da, n, db, n, 0.0, dc, n);
  cudaDeviceSynchronize();
  CHECK(cublasSetKernelStream(nullptr) == CUBLAS_STATUS_SUCCESS, "cublasSetKernelStream failed");
  cudaMemset(dc, 0, n * n * 8);
  cudaDeviceSynchronize();
  spin_until_set<<<1, 1, 0, s>>>(flag_dev);
  CHECK(cublasSetKernelStream(s) == CUBLAS_STATUS_SUCCESS, "cublasSetKernelStream failed");
  legacy_dgemm('N', 'N', n, n, n, 1.0, da, n, db, n, 0.0, dc, n);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto r0 = std::chrono::steady_clock::now();
  cudaMemcpyAsync(pinned, dc, n * n * 8, cudaMemcpyDeviceToHost, reader);
  const cudaError_t read_status = cudaStreamSynchronize(reader);
  const double read_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count();
  int early = 0;
  for (int e = 0; e < n * n; ++e) early += pinned[e] != 0.0;
  *reinterpret_cast<volatile int*>(flag) = 1;
  cudaStreamSynchronize(s);
  CHECK(read_status == cudaSuccess && read_s < 2.0, "early read: status %d, %.1f s",
        static_cast<int>(read_status), read_s);
  CHECK(early == 0, "legacy cublasDgemm did not run on the kernel stream: %d elements written early",
        early);
  cudaMemcpy(got.data(), dc, n * n * 8, cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (double x : got) wrong += x != n;
  CHECK(wrong == 0, "legacy cublasDgemm on the kernel stream: %d wrong elements", wrong);
  std::printf("legacy cublasDgemm on cublasSetKernelStream's stream: %s (early read %.3f s)\n",
              early == 0 && wrong == 0 && read_s < 2.0 ? "ok" : "FAILED", read_s);
  cublasSetKernelStream(nullptr);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFreeHost(pinned);
  cudaFreeHost(flag);
  cudaStreamDestroy(s);
  cudaStreamDestroy(reader);
}

}  // namespace

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no GPU: nothing to test\n");
    return 77;  // ctest SKIP_RETURN_CODE
  }
  const int threads = argc > 1 ? std::atoi(argv[1]) : 8;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 4;
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  std::printf("emulation expected: %s\n", expect_emulation() ? "yes (bitwise vs host reference)" : "no");
  cublasInit();
  one_case(nullptr, nullptr, entry::legacy, 256, 300, 320, 7);
  legacy_kernel_stream_case();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t, iterations);
  for (auto& t : pool) t.join();
  std::printf("%s: %d failures\n", failures == 0 ? "PASS" : "FAIL", failures.load());
  return failures == 0 ? 0 : 1;
}
