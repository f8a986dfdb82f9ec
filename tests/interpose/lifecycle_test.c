/* Process lifecycle under the interposer, on the host path (runs in CI, no GPU needed; on
 * a machine with a GPU, with OZDGEMM_MODE=emulate, the parent's calls are emulated):
 *   lifecycle_test no-dgemm   a program that never calls DGEMM (only another BLAS routine)
 *                             must not initialise CUDA nor load cuBLAS: neither libcuda nor
 *                             libcublas/libcublasLt is mapped at exit time;
 *   lifecycle_test fork       DGEMM, then fork(): the child's DGEMM calls (cblas_dgemm and
 *                             dgemm_) must complete correctly, without hanging or crashing (CUDA
 *                             is not fork-safe: the library must send them to the CPU BLAS), and
 *                             so must a grandchild's; the parent checks the exit statuses under
 *                             a deadline. */
#include <cblas.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "proc_maps.h"

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*, size_t, size_t);

static int libcuda_mapped(void) { return mapped("/libcuda.so"); }

static const char* yes_no(int v) { return v == 1 ? "yes" : v == 0 ? "no" : "?"; }

/* One cblas_dgemm and one dgemm_ of n x n x n, checked against the long double reference. */
static int dgemm_round(const char* who, int n) {
  double* a = random_buffer((size_t)n * n);
  double* b = random_buffer((size_t)n * n);
  double* c = random_buffer((size_t)n * n);
  double* c0 = malloc(sizeof(double) * (size_t)n * n);
  long double* want = malloc(sizeof(long double) * (size_t)n * n);
  long double* scale = malloc(sizeof(long double) * (size_t)n * n);
  memcpy(c0, c, sizeof(double) * (size_t)n * n);
  reference_gemm(0, 0, 1, n, n, n, 1.0, a, n, b, n, 0.5, c0, n, want, scale);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, a, n, b, n, 0.5, c, n);
  int bad = compare_gemm(who, 0, n, n, n, c, n, c0, want, scale);
  memcpy(c, c0, sizeof(double) * (size_t)n * n);
  const char ta = 'N', tb = 'T';
  const double alpha = 1.0, beta = 0.5;
  dgemm_(&ta, &tb, &n, &n, &n, &alpha, a, &n, b, &n, &beta, c, &n, 1, 1);
  bad += compare_gemm(who, 0, n, n, n, c, n, c0, want, scale);
  free(a), free(b), free(c), free(c0), free(want), free(scale);
  printf("%s: %d x %d x %d cblas_dgemm and dgemm_: %s\n", who, n, n, n, bad ? "WRONG" : "ok");
  return bad != 0;
}

/* Waits for `pid` at most `seconds`; kills it on expiry. Returns its exit status or -1. */
static int wait_with_deadline(pid_t pid, int seconds) {
  const time_t end = time(NULL) + seconds;
  int status = 0;
  while (time(NULL) < end) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      fprintf(stderr, "FAIL: child %d killed by signal %d\n", (int)pid, WTERMSIG(status));
      return -1;
    }
    usleep(20000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  fprintf(stderr, "FAIL: child %d still running after %d s (hang): killed\n", (int)pid, seconds);
  return -1;
}

static int child_work(int depth) {
  int bad = dgemm_round(depth == 1 ? "child" : "grandchild", 300);
  if (depth == 1) {
    fflush(stdout); /* or the grandchild inherits the buffered lines */
    const pid_t g = fork();
    if (g < 0) return 1;
    if (g == 0) exit(child_work(2));
    bad += wait_with_deadline(g, 60) != 0;
  }
  return bad != 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "no-dgemm") == 0) {
    /* Another BLAS routine, so the BLAS library is in use, but no DGEMM. */
    double x[3] = {1, 2, 3}, y[3] = {4, 5, 6};
    const double dot = cblas_ddot(3, x, 1, y, 1);
    /* cuBLAS is loaded on first use: its load-time constructor (cuBLASLt's) opens the driver
     * and costs ~80 ms per process. "/libcublas" also matches libcublasLt. */
    const int cuda = libcuda_mapped(), cublas = mapped("/libcublas");
    printf("ddot = %g; libcuda mapped: %s; libcublas mapped: %s\n", dot, yes_no(cuda),
           yes_no(cublas));
    if (dot != 32.0) fprintf(stderr, "FAIL: a program without DGEMM got a wrong ddot\n");
    if (cuda != 0) fprintf(stderr, "FAIL: a program without DGEMM initialised CUDA (libcuda)\n");
    if (cublas != 0) fprintf(stderr, "FAIL: a program without DGEMM loaded cuBLAS (libcublas)\n");
    return dot != 32.0 || cuda != 0 || cublas != 0;
  }
  if (strcmp(mode, "fork") == 0) {
    int bad = dgemm_round("parent", 300);
    printf("parent: libcuda mapped after DGEMM: %s\n", yes_no(libcuda_mapped()));
    fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) exit(child_work(1));
    const int st = wait_with_deadline(pid, 120);
    if (st != 0) fprintf(stderr, "FAIL: forked child exited with %d\n", st);
    bad += st != 0;
    bad += dgemm_round("parent after fork", 200);
    return bad != 0;
  }
  fprintf(stderr, "usage: %s no-dgemm|fork\n", argv[0]);
  return 2;
}
