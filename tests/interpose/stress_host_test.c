/* Load on the host entry points: T threads (argv[1], default 8) call cblas_dgemm (both layouts)
 * and dgemm_ with mixed shapes and transposes until a deadline (argv[2] seconds, default 5),
 * each result checked against the long double reference of check.h. All threads start
 * together, so the library's one-time set-up (settings, logger, CPU BLAS resolution, host
 * path) is raced on the first call. Prints threads x calls and the wall time. Under the
 * preloaded library without a GPU the calls go to the CPU BLAS; under the fake host path they
 * are served from the hooks' translation; on a machine with a GPU with OZDGEMM_MODE=emulate, by the
 * GPU host path. */
#include <cblas.h>
#include <pthread.h>
#include <time.h>

#include "check.h"

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*, size_t, size_t);

static double deadline_s;
static pthread_barrier_t start;
static long long calls_total = 0, failures_total = 0;
static pthread_mutex_t totals = PTHREAD_MUTEX_INITIALIZER;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void* worker(void* arg) {
  const int id = (int)(intptr_t)arg;
  static const int shapes[][3] = {{1, 1, 1},    {3, 1, 70},    {1, 9, 4},     {17, 19, 23},
                                  {64, 64, 64}, {100, 80, 30}, {7, 130, 200}, {150, 3, 5}};
  const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
  long long calls = 0, bad = 0;
  uint64_t r = 0x9e3779b97f4a7c15u * (uint64_t)(id + 1);
  pthread_barrier_wait(&start);
  const double end = now() + deadline_s;
  while (now() < end) {
    r = r * 6364136223846793005u + 1442695040888963407u;
    const int* s = shapes[(r >> 33) % (uint64_t)nshapes];
    const int m = s[0], n = s[1], k = s[2];
    const int kind = (int)((r >> 40) % 3); /* 0: cblas col, 1: cblas row, 2: dgemm_ */
    const int ta = (int)((r >> 45) & 1), tb = (int)((r >> 46) & 1), rm = kind == 1;
    const int lda = (rm ? (ta ? m : k) : (ta ? k : m)) + (int)((r >> 50) % 3);
    const int ldb = (rm ? (tb ? k : n) : (tb ? n : k)) + (int)((r >> 52) % 3);
    const int ldc = (rm ? n : m) + (int)((r >> 54) % 3);
    const int ca = rm ? (ta ? k : m) : (ta ? m : k), cb = rm ? (tb ? n : k) : (tb ? k : n);
    const int cc = rm ? m : n;
    double* a = random_buffer((size_t)lda * ca);
    double* b = random_buffer((size_t)ldb * cb);
    double* c = random_buffer((size_t)ldc * cc);
    double* c0 = malloc(sizeof(double) * (size_t)ldc * cc);
    long double* want = malloc(sizeof(long double) * (size_t)m * n);
    long double* scale = malloc(sizeof(long double) * (size_t)m * n);
    memcpy(c0, c, sizeof(double) * (size_t)ldc * cc);
    const double alpha = 0.75, beta = (r >> 56) & 1 ? 0.0 : -1.5;
    reference_gemm(rm, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c0, ldc, want, scale);
    if (kind == 2) {
      const char cta = ta ? 'T' : 'N', ctb = tb ? 'T' : 'N';
      dgemm_(&cta, &ctb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
    } else {
      cblas_dgemm(rm ? CblasRowMajor : CblasColMajor, ta ? CblasTrans : CblasNoTrans,
                  tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
    bad += compare_gemm("stress", rm, m, n, k, c, ldc, c0, want, scale) != 0;
    ++calls;
    free(a), free(b), free(c), free(c0), free(want), free(scale);
  }
  pthread_mutex_lock(&totals);
  calls_total += calls;
  failures_total += bad;
  pthread_mutex_unlock(&totals);
  return NULL;
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 8;
  deadline_s = argc > 2 ? atof(argv[2]) : 5.0;
  pthread_t tid[256];
  if (threads < 1 || threads > 256) return 2;
  pthread_barrier_init(&start, NULL, (unsigned)threads);
  const double t0 = now();
  for (int t = 0; t < threads; ++t) pthread_create(&tid[t], NULL, worker, (void*)(intptr_t)t);
  for (int t = 0; t < threads; ++t) pthread_join(tid[t], NULL);
  const double wall = now() - t0;
  printf("host stress: %d threads x %lld calls (%lld in all), %.1f s wall, %lld wrong\n", threads,
         calls_total / threads, calls_total, wall, failures_total);
  if (wall > deadline_s + 60) {
    fprintf(stderr, "FAIL: ran %.1f s past a %.1f s deadline\n", wall, deadline_s);
    return 1;
  }
  return failures_total != 0 || calls_total == 0;
}
