/* ScaLAPACK on a 2 x 2 BLACS grid: pdgemm (NN with beta != 0, TN with beta = 0) and pdgesv,
 * whose local DGEMMs (the PBLAS kernels, pdgetrf's trailing updates) are Fortran dgemm_ calls
 * that libozdgemm.so intercepts when preloaded.
 *
 * Every rank generates the global matrices from a hash of (matrix, i, j), so each can compute
 * an independent long double reference for its own entries without any BLAS:
 *   pdgemm: |C - R|_ij <= (k + 2) u (|alpha| (|A||B|)_ij + |beta| |C0_ij|), u = 2^-53, the
 *           classic bound of a recursive-summation dot product (plus the alpha/beta
 *           roundings); R is within 2^-64-ish of exact, far below it. ozdgemm's emulation
 *           (s = 14 and up) is well inside it too: its error is a few u relative to the row and
 *           column norms, against a bound that grows with k.
 *   pdgesv: ||b - A x||_inf / (||A||_inf ||x||_inf n u) <= 30, LAPACK's own test threshold
 *           (dget02/pdlaschk); the residual is computed from the generated A and b, in long
 *           double, after gathering x.
 *
 * --save DIR writes this rank's local results to DIR/<name>.rank<r>.bin; --compare DIR reads
 * those of an earlier run (without the library) and checks each pdgemm entry against it with
 * twice the bound (both are within the bound of the exact product) and prints how many entries
 * are bit-identical; the x of pdgesv is compared for information (it depends on the
 * conditioning). Exit status 0 when every check passes on every rank.
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void Cblacs_pinfo(int* mypnum, int* nprocs);
void Cblacs_get(int context, int what, int* val);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* ictxt, const int* lld, int* info);
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const double* alpha, const double* a, const int* ia, const int* ja, const int* desca,
             const double* b, const int* ib, const int* jb, const int* descb, const double* beta,
             double* c, const int* ic, const int* jc, const int* descc, size_t transa_len,
             size_t transb_len);
void pdgesv_(const int* n, const int* nrhs, double* a, const int* ia, const int* ja,
             const int* desca, int* ipiv, double* b, const int* ib, const int* jb, const int* descb,
             int* info);

enum { kGridRows = 2, kGridCols = 2 };
static const double kUnit = 0x1p-53; /* unit roundoff of double */
static const double kSolveThreshold = 30.0;

static int g_rank, g_myrow, g_mycol, g_ctx;
static const char* g_save_dir;
static const char* g_compare_dir;

/* Entry (i, j) of generated matrix `id`: uniform in [-0.5, 0.5) from splitmix64. */
static double gen(uint64_t id, int64_t i, int64_t j) {
  uint64_t z = id * 0x9E3779B97F4A7C15ull + (uint64_t)i * 0xBF58476D1CE4E5B9ull +
               (uint64_t)j * 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1p-53 - 0.5;
}

/* A distributed matrix: rows x cols in mb x nb blocks over the grid, local part column major. */
typedef struct {
  int rows, cols, mb, nb;
  int lrows, lcols;
  int desc[9];
  double* data;
} dmat;

static int local_to_global(int l, int nb, int coord, int nprocs) {
  return (l / nb) * nprocs * nb + coord * nb + l % nb;
}

static dmat dmat_make(int rows, int cols, int mb, int nb) {
  dmat a;
  const int zero = 0, prow = kGridRows, pcol = kGridCols;
  a.rows = rows, a.cols = cols, a.mb = mb, a.nb = nb;
  a.lrows = numroc_(&rows, &mb, &g_myrow, &zero, &prow);
  a.lcols = numroc_(&cols, &nb, &g_mycol, &zero, &pcol);
  const int lld = a.lrows > 1 ? a.lrows : 1;
  int info = 0;
  descinit_(a.desc, &rows, &cols, &mb, &nb, &zero, &zero, &g_ctx, &lld, &info);
  if (info != 0) {
    fprintf(stderr, "rank %d: descinit_ failed (info %d)\n", g_rank, info);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  a.data = malloc(sizeof(double) * (size_t)(a.lrows > 0 ? a.lrows : 1) *
                  (size_t)(a.lcols > 0 ? a.lcols : 1));
  return a;
}

static int grow(const dmat* a, int il) { return local_to_global(il, a->mb, g_myrow, kGridRows); }
static int gcol(const dmat* a, int jl) { return local_to_global(jl, a->nb, g_mycol, kGridCols); }

static void dmat_fill(dmat* a, uint64_t id) {
  for (int jl = 0; jl < a->lcols; ++jl)
    for (int il = 0; il < a->lrows; ++il)
      a->data[il + (size_t)jl * a->lrows] = gen(id, grow(a, il), gcol(a, jl));
}

static size_t dmat_count(const dmat* a) { return (size_t)a->lrows * (size_t)a->lcols; }

static void result_path(char* buf, size_t len, const char* dir, const char* name) {
  snprintf(buf, len, "%s/%s.rank%d.bin", dir, name, g_rank);
}

static int save(const char* name, const double* x, size_t count) {
  if (g_save_dir == NULL) return 0;
  char path[4096];
  result_path(path, sizeof path, g_save_dir, name);
  FILE* f = fopen(path, "wb");
  if (f == NULL || fwrite(x, sizeof(double), count, f) != count || fclose(f) != 0) {
    fprintf(stderr, "rank %d: cannot write %s\n", g_rank, path);
    return 1;
  }
  return 0;
}

/* The earlier run's values, or NULL without --compare (or on error, with *failed set). */
static double* load(const char* name, size_t count, int* failed) {
  if (g_compare_dir == NULL) return NULL;
  char path[4096];
  result_path(path, sizeof path, g_compare_dir, name);
  double* x = malloc(sizeof(double) * (count ? count : 1));
  FILE* f = fopen(path, "rb");
  if (f == NULL || fread(x, sizeof(double), count, f) != count || fgetc(f) != EOF) {
    fprintf(stderr, "rank %d: cannot read %zu values from %s\n", g_rank, count, path);
    *failed = 1;
    if (f != NULL) fclose(f);
    free(x);
    return NULL;
  }
  fclose(f);
  return x;
}

static double max_all(double x) {
  double y;
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return y;
}

static long sum_all(long x) {
  long y;
  MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return y;
}

/* C = alpha op(A) B + beta C with op(A) m x k (A generated as id 1, stored k x m for 'T'),
 * B k x n (id 2), C m x n (id 3). Returns the number of failed checks on this rank. */
static int check_pdgemm(const char* name, char transa, int m, int n, int k, double alpha,
                        double beta, int nb) {
  const int one = 1;
  dmat a = transa == 'N' ? dmat_make(m, k, nb, nb) : dmat_make(k, m, nb, nb);
  dmat b = dmat_make(k, n, nb, nb);
  dmat c = dmat_make(m, n, nb, nb);
  dmat_fill(&a, 1);
  dmat_fill(&b, 2);
  dmat_fill(&c, 3);
  const char tb = 'N';
  pdgemm_(&transa, &tb, &m, &n, &k, &alpha, a.data, &one, &one, a.desc, b.data, &one, &one, b.desc,
          &beta, c.data, &one, &one, c.desc, 1, 1);

  int failed = 0;
  double* prev = load(name, dmat_count(&c), &failed);
  double worst = 0, worst_prev = 0, max_diff = 0;
  long identical = 0;
  for (int jl = 0; jl < c.lcols; ++jl) {
    const int j = gcol(&c, jl);
    for (int il = 0; il < c.lrows; ++il) {
      const int i = grow(&c, il);
      long double exact = 0, magnitude = 0;
      for (int p = 0; p < k; ++p) {
        const long double x = transa == 'N' ? gen(1, i, p) : gen(1, p, i);
        const long double y = gen(2, p, j);
        exact += x * y;
        magnitude += fabsl(x * y);
      }
      const double c0 = gen(3, i, j);
      exact = (long double)alpha * exact + (long double)beta * c0;
      const double bound =
          (double)((k + 2) * kUnit * (fabsl(alpha) * magnitude + fabs(beta) * fabs(c0))) +
          0x1p-1060;
      const double got = c.data[il + (size_t)jl * c.lrows];
      const double ratio = (double)fabsl((long double)got - exact) / bound;
      if (!(ratio <= 1.0)) ++failed; /* NaN fails too */
      if (ratio > worst || ratio != ratio) worst = ratio;
      if (prev != NULL) {
        const double before = prev[il + (size_t)jl * c.lrows];
        const double diff = fabs(got - before);
        if (!(diff <= 2 * bound)) ++failed;
        if (diff / (2 * bound) > worst_prev || diff != diff) worst_prev = diff / (2 * bound);
        if (diff > max_diff) max_diff = diff;
        if (memcmp(&got, &before, sizeof got) == 0) ++identical;
      }
    }
  }
  failed += save(name, c.data, dmat_count(&c));
  worst = max_all(worst);
  worst_prev = max_all(worst_prev);
  max_diff = max_all(max_diff);
  identical = sum_all(identical);
  const long all_failed = sum_all(failed);
  if (g_rank == 0) {
    printf(
        "%s: %s m=%d n=%d k=%d nb=%d alpha=%g beta=%g: max |C-R|/bound = %.3g (bound (k+2)u"
        "(|alpha||A||B| + |beta||C|))",
        all_failed ? "FAIL" : "ok", name, m, n, k, nb, alpha, beta, worst);
    if (g_compare_dir != NULL)
      printf(
          "; against the run without the library: max |diff| = %.3g, max |diff|/(2 bound) ="
          " %.3g, %ld of %ld entries bit-identical",
          max_diff, worst_prev, identical, (long)m * n);
    printf("\n");
  }
  free(prev);
  free(a.data);
  free(b.data);
  free(c.data);
  return failed;
}

/* Solves A X = B (A n x n, id 4, with n/4 added to its diagonal; B n x nrhs, id 5) and checks
 * the scaled residual of every column. */
static int check_pdgesv(int n, int nrhs, int nb) {
  const int one = 1;
  dmat a = dmat_make(n, n, nb, nb);
  dmat b = dmat_make(n, nrhs, nb, nb);
  dmat_fill(&a, 4);
  for (int jl = 0; jl < a.lcols; ++jl)
    for (int il = 0; il < a.lrows; ++il)
      if (grow(&a, il) == gcol(&a, jl)) a.data[il + (size_t)jl * a.lrows] += n / 4.0;
  dmat_fill(&b, 5);
  int* ipiv = malloc(sizeof(int) * (size_t)(a.lrows + nb));
  int info = 0;
  pdgesv_(&n, &nrhs, a.data, &one, &one, a.desc, ipiv, b.data, &one, &one, b.desc, &info);

  int failed = info != 0;
  /* Gather x (now in b) on every rank. */
  double* part = calloc((size_t)n * nrhs, sizeof(double));
  double* x = malloc(sizeof(double) * (size_t)n * nrhs);
  for (int jl = 0; jl < b.lcols; ++jl)
    for (int il = 0; il < b.lrows; ++il)
      part[grow(&b, il) + (size_t)gcol(&b, jl) * n] = b.data[il + (size_t)jl * b.lrows];
  MPI_Allreduce(part, x, n * nrhs, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

  long double norm_a = 0; /* ||A||_inf */
  for (int i = 0; i < n; ++i) {
    long double row = 0;
    for (int j = 0; j < n; ++j) row += fabsl(gen(4, i, j) + (i == j ? n / 4.0 : 0.0));
    if (row > norm_a) norm_a = row;
  }
  double worst = 0;
  for (int r = 0; r < nrhs; ++r) {
    long double norm_r = 0, norm_x = 0;
    for (int i = 0; i < n; ++i) {
      long double s = -(long double)gen(5, i, r);
      for (int j = 0; j < n; ++j)
        s += ((long double)gen(4, i, j) + (i == j ? n / 4.0L : 0.0L)) * x[j + (size_t)r * n];
      if (fabsl(s) > norm_r) norm_r = fabsl(s);
      if (fabs(x[i + (size_t)r * n]) > norm_x) norm_x = fabs(x[i + (size_t)r * n]);
    }
    const double ratio = (double)(norm_r / (norm_a * norm_x * n * kUnit));
    if (!(ratio <= kSolveThreshold)) failed = 1;
    if (ratio > worst || ratio != ratio) worst = ratio;
  }

  double* prev = load("pdgesv_x", (size_t)n * nrhs, &failed);
  double rel_diff = 0;
  long identical = 0;
  if (prev != NULL) {
    double norm_diff = 0, norm_prev = 0;
    for (size_t i = 0; i < (size_t)n * nrhs; ++i) {
      norm_diff = fmax(norm_diff, fabs(x[i] - prev[i]));
      norm_prev = fmax(norm_prev, fabs(prev[i]));
      identical += memcmp(&x[i], &prev[i], sizeof x[i]) == 0;
    }
    rel_diff = norm_diff / norm_prev;
  }
  failed += save("pdgesv_x", x, (size_t)n * nrhs);
  const long all_failed = sum_all(failed);
  if (g_rank == 0) {
    printf(
        "%s: pdgesv n=%d nrhs=%d nb=%d: info=%d, max ||b-Ax||/(||A|| ||x|| n u) = %.3g"
        " (threshold %g)",
        all_failed ? "FAIL" : "ok", n, nrhs, nb, info, worst, kSolveThreshold);
    if (prev != NULL)
      printf(
          "; against the run without the library: ||x-x0||/||x0|| = %.3g, %ld of %ld entries"
          " bit-identical",
          rel_diff, identical, (long)n * nrhs);
    printf("\n");
  }
  free(prev);
  free(part);
  free(x);
  free(ipiv);
  free(a.data);
  free(b.data);
  return failed;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--save") == 0 && i + 1 < argc)
      g_save_dir = argv[++i];
    else if (strcmp(argv[i], "--compare") == 0 && i + 1 < argc)
      g_compare_dir = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--save DIR] [--compare DIR]\n", argv[0]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  int nprocs = 0;
  Cblacs_pinfo(&g_rank, &nprocs);
  if (nprocs != kGridRows * kGridCols) {
    if (g_rank == 0) fprintf(stderr, "run with %d ranks (mpirun -np %d)\n", 4, 4);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int prow, pcol;
  Cblacs_get(-1, 0, &g_ctx);
  Cblacs_gridinit(&g_ctx, "Row", kGridRows, kGridCols);
  Cblacs_gridinfo(g_ctx, &prow, &pcol, &g_myrow, &g_mycol);

  /* Sizes that are not multiples of the block size, so the edge blocks are ragged. */
  int failed = 0;
  failed += check_pdgemm("pdgemm_nn", 'N', 301, 257, 203, 1.5, -0.75, 32);
  failed += check_pdgemm("pdgemm_tn", 'T', 190, 221, 333, -1.0, 0.0, 48);
  failed += check_pdgesv(300, 3, 32);

  const long all_failed = sum_all(failed);
  if (g_rank == 0) printf("%s\n", all_failed ? "FAILED" : "all checks passed");
  Cblacs_gridexit(g_ctx);
  MPI_Finalize();
  return all_failed ? 1 : 0;
}
