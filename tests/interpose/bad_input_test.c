/* Bad input through the intercepted entry points: every case is run twice in this process,
 * once through dgemm_ / cblas_dgemm (the library's when it is preloaded) and once through the
 * reference BLAS's own definitions (libblas.so.3, looked up in that library with dlsym), and
 * the two must agree:
 *   - invalid arguments: the same xerbla_ / cblas_xerbla report (routine and parameter
 *     number, recorded by the handlers this program exports), and C untouched by both;
 *   - valid calls with NaN/Inf in A, B, C, alpha, beta, subnormals, overflow, zeros, long k,
 *     m = 1 / n = 1, huge leading dimensions: the same class (NaN, +Inf, -Inf, finite) for
 *     every element, finite elements within a bound of a long double reference loose enough
 *     for the emulation (s >= 14) and tight enough to catch a wrong operand or stride, and the
 *     padding of C untouched.
 * Without the library both runs are reference BLAS (the program checks itself); under
 * libozdgemm_fake_offload.so the non-trivial calls are served by the hooks' translation; on
 * a machine with a GPU, with OZDGEMM_MODE=emulate, by the emulation. Prints "N cases, M matched".
 */
#include <cblas.h>
#include <ctype.h>
#include <dlfcn.h>

#include "check.h"

#include "xerbla_recorder.h"

typedef void (*dgemm_fn)(const char*, const char*, const int*, const int*, const int*,
                         const double*, const double*, const int*, const double*, const int*,
                         const double*, double*, const int*, size_t, size_t);
typedef void (*cblas_fn)(int, int, int, int, int, int, double, const double*, int, const double*,
                         int, double, double*, int);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*, size_t, size_t);

static dgemm_fn ref_dgemm;
static int order_dependent = 0; /* elements accepted by the overflow-order rule */
static cblas_fn ref_cblas;

/* One call. cblas: layout 101/102 and ops 111/112/113 (or invalid values); Fortran: chars. */
typedef struct {
  const char* name;
  int cblas, layout;
  char ta, tb; /* Fortran ops; for cblas 'N' -> NoTrans, 'T' -> Trans, 'C' -> ConjTrans */
  int cta, ctb;
  int m, n, k, lda, ldb, ldc;
  double alpha, beta;
  int edit; /* which poke (below) */
} gcase;

enum {
  kNone,
  kNanA,
  kInfA,
  kNinfB,
  kNanC,
  kInfC,
  kNanAll,
  kInfTimesZero,
  kInfMinusInf,
  kSubA,
  kSubAB,
  kHugeRow,
  kHugeNeg,
  kZeroA,
  kZeroAll,
  kBigProducts
};

typedef struct {
  double *A, *B, *C;
  size_t na, nb, nc;
} bufs;

static int rows_of(int row_major, int trans, int r, int c) { /* stored rows of op = r x c */
  int sr = trans ? c : r, sc = trans ? r : c;
  return row_major ? sc : sr;
}
static int cols_of(int row_major, int trans, int r, int c) {
  int sr = trans ? c : r, sc = trans ? r : c;
  return row_major ? sr : sc;
}
static int is_trans(char t) { return t == 'T' || t == 't' || t == 'C' || t == 'c'; }
static int max1(int v) { return v > 1 ? v : 1; }
enum { A_ = -77777 }; /* a leading dimension set to its minimum valid value */

static double* at_op(double* x, int ld, int row_major, int trans, int i, int j) {
  const int r = trans ? j : i, c = trans ? i : j;
  return row_major ? &x[(size_t)r * ld + c] : &x[(size_t)c * ld + r];
}

static void poke(const gcase* g, bufs* b) {
  const int rm = g->cblas && g->layout == CblasRowMajor;
  const int ta = is_trans(g->ta), tb = is_trans(g->tb);
  const double inf = INFINITY, nan = NAN;
  double *A = b->A, *B = b->B, *C = b->C;
  const int m = g->m, n = g->n, k = g->k;
#define PA(i, l) (*at_op(A, g->lda, rm, ta, (i), (l)))
#define PB(l, j) (*at_op(B, g->ldb, rm, tb, (l), (j)))
#define PC(i, j) (*at_op(C, g->ldc, rm, 0, (i), (j)))
  switch (g->edit) {
    case kNanA:
      PA(1, 2) = nan;
      break;
    case kInfA:
      PA(0, 1) = inf;
      break;
    case kNinfB:
      PB(2, 1) = -inf;
      break;
    case kNanC:
      PC(1, 1) = nan;
      break;
    case kInfC:
      PC(0, 2) = inf;
      break;
    case kNanAll:
      for (size_t e = 0; e < b->na; ++e) A[e] = nan;
      for (size_t e = 0; e < b->nb; ++e) B[e] = nan;
      for (size_t e = 0; e < b->nc; ++e) C[e] = nan;
      break;
    case kInfTimesZero:
      PA(0, 3) = inf;
      PB(3, 0) = 0.0;
      break;
    case kInfMinusInf:
      PA(1, 1) = inf;
      PA(1, 2) = -inf;
      PB(1, 1) = 1.0;
      PB(2, 1) = 2.0;
      break;
    case kSubA:
      for (int l = 0; l < k; ++l)
        for (int i = 0; i < m; ++i) PA(i, l) *= 0x1p-1060;
      break;
    case kSubAB:
      for (int l = 0; l < k; ++l) {
        for (int i = 0; i < m; ++i) PA(i, l) *= 0x1p-1060;
        for (int j = 0; j < n; ++j) PB(l, j) *= 0x1p-1060;
      }
      break;
    case kHugeRow:
      for (int l = 0; l < k; ++l) {
        PA(0, l) = DBL_MAX / 2;
        PB(l, 0) = 1.0;
      }
      break;
    case kHugeNeg:
      for (int l = 0; l < k; ++l) {
        PA(1, l) = -DBL_MAX / 2;
        PB(l, 1) = 1.0;
      }
      break;
    case kZeroA:
      for (size_t e = 0; e < b->na; ++e) A[e] = 0.0;
      break;
    case kZeroAll:
      for (size_t e = 0; e < b->na; ++e) A[e] = 0.0;
      for (size_t e = 0; e < b->nb; ++e) B[e] = 0.0;
      for (size_t e = 0; e < b->nc; ++e) C[e] = 0.0;
      break;
    case kBigProducts:
      for (int l = 0; l < k; ++l) {
        PA(2, l) *= 0x1p1000;
        PB(l, 1) *= 0x1p-10;
      }
      break;
    default:
      break;
  }
  (void)n;
#undef PA
#undef PB
#undef PC
}

static const char* fp_class(double x) {
  return isnan(x) ? "NaN" : isinf(x) ? (x > 0 ? "+Inf" : "-Inf") : "finite";
}

static void call(const gcase* g, int reference, bufs* b) {
  if (g->cblas) {
    if (reference)
      ref_cblas(g->layout, g->cta, g->ctb, g->m, g->n, g->k, g->alpha, b->A, g->lda, b->B, g->ldb,
                g->beta, b->C, g->ldc);
    else
      cblas_dgemm((enum CBLAS_ORDER)g->layout, (enum CBLAS_TRANSPOSE)g->cta,
                  (enum CBLAS_TRANSPOSE)g->ctb, g->m, g->n, g->k, g->alpha, b->A, g->lda, b->B,
                  g->ldb, g->beta, b->C, g->ldc);
  } else {
    (reference ? ref_dgemm : dgemm_)(&g->ta, &g->tb, &g->m, &g->n, &g->k, &g->alpha, b->A, &g->lda,
                                     b->B, &g->ldb, &g->beta, b->C, &g->ldc, 1, 1);
  }
}

/* 1 when the intercepted call matched reference BLAS. */
static int run_case(gcase g) {
  const int rm = g.cblas && g.layout == CblasRowMajor;
  const int ta = is_trans(g.ta), tb = is_trans(g.tb);
  if (g.cblas) {
    if (g.cta == 0) g.cta = ta ? (g.ta == 'C' ? CblasConjTrans : CblasTrans) : CblasNoTrans;
    if (g.ctb == 0) g.ctb = tb ? (g.tb == 'C' ? CblasConjTrans : CblasTrans) : CblasNoTrans;
  }
  if (g.lda == A_) g.lda = max1(rows_of(rm, ta, g.m, g.k));
  if (g.ldb == A_) g.ldb = max1(rows_of(rm, tb, g.k, g.n));
  if (g.ldc == A_) g.ldc = max1(rows_of(rm, 0, g.m, g.n));
  const int ca = cols_of(rm, ta, g.m, g.k), cb = cols_of(rm, tb, g.k, g.n),
            cc = cols_of(rm, 0, g.m, g.n);
  bufs in;
  in.na = (size_t)max1(g.lda) * (size_t)(ca > 0 ? ca : 1);
  in.nb = (size_t)max1(g.ldb) * (size_t)(cb > 0 ? cb : 1);
  in.nc = (size_t)max1(g.ldc) * (size_t)(cc > 0 ? cc : 1);
  in.A = random_buffer(in.na);
  in.B = random_buffer(in.nb);
  in.C = random_buffer(in.nc);
  poke(&g, &in);
  bufs ref = in, got = in;
  ref.C = malloc(in.nc * sizeof(double));
  got.C = malloc(in.nc * sizeof(double));
  memcpy(ref.C, in.C, in.nc * sizeof(double));
  memcpy(got.C, in.C, in.nc * sizeof(double));

  handler_calls = 0;
  last_routine[0] = '\0';
  last_info = 0;
  call(&g, 1, &ref);
  const int ref_calls = handler_calls, ref_info = last_info;
  char ref_routine[32];
  strcpy(ref_routine, last_routine);
  handler_calls = 0;
  last_routine[0] = '\0';
  last_info = 0;
  call(&g, 0, &got);

  int ok = 1;
  char why[256] = "";
  if (ref_calls != handler_calls || ref_info != last_info || strcmp(ref_routine, last_routine)) {
    snprintf(why, sizeof why, "report '%s' %d (x%d), reference BLAS '%s' %d (x%d)", last_routine,
             last_info, handler_calls, ref_routine, ref_info, ref_calls);
    ok = 0;
  } else if (ref_calls != 0) {
    if (memcmp(got.C, in.C, in.nc * sizeof(double)) != 0) {
      snprintf(why, sizeof why, "C written on invalid arguments");
      ok = 0;
    }
  } else {
    /* Padding of C untouched, classes equal, finite values within the bound. */
    const int srows = rows_of(rm, 0, g.m, g.n);
    long double* want = malloc(sizeof(long double) * (size_t)max1(g.m) * (size_t)max1(g.n));
    long double* scale = malloc(sizeof(long double) * (size_t)max1(g.m) * (size_t)max1(g.n));
    if (g.m > 0 && g.n > 0)
      reference_gemm(rm, ta, tb, g.m, g.n, g.k, g.alpha, in.A, g.lda, in.B, g.ldb, g.beta, in.C,
                     g.ldc, want, scale);
    for (int q = 0; ok && q < cc; ++q)
      for (int p = 0; ok && p < g.ldc; ++p) {
        const size_t at = (size_t)q * g.ldc + p;
        if (p >= srows) {
          if (memcmp(&got.C[at], &in.C[at], sizeof(double)) != 0) {
            snprintf(why, sizeof why, "padding of C written at (%d,%d)", p, q);
            ok = 0;
          }
          continue;
        }
        const double x = got.C[at], r = ref.C[at];
        const int ei = rm ? q : p, ej = rm ? p : q;
        /* Reference BLAS forms alpha B(l,j) first and accumulates term by term: an
         * intermediate overflow can give +-Inf, or Inf - Inf = NaN, where the exact result is
         * finite or +-Inf. The exact result's class (long double, no intermediate overflow)
         * is accepted there, counted apart; a finite value is still checked against the
         * bound below. */
        int accepted = 0;
        if (strcmp(fp_class(x), fp_class(r)) != 0 && !isfinite(r) && g.m > 0 && g.n > 0 &&
            strcmp(fp_class(x), fp_class((double)want[(size_t)ej * g.m + ei])) == 0) {
          ++order_dependent;
          accepted = 1;
          if (!isfinite(x)) continue;
        }
        if (!accepted && strcmp(fp_class(x), fp_class(r)) != 0) {
          snprintf(why, sizeof why, "storage (%d,%d): %s, reference BLAS %s", p, q, fp_class(x),
                   fp_class(r));
          ok = 0;
          continue;
        }
        if (!isfinite(x) || g.alpha == 0.0 || g.k == 0) {
          if (isfinite(x) && memcmp(&x, &r, sizeof x) != 0 && !(x == 0 && r == 0)) {
            snprintf(why, sizeof why, "storage (%d,%d): %.17g, reference BLAS %.17g (beta C)", p, q,
                     x, r);
            ok = 0;
          }
          continue;
        }
        const int i = rm ? q : p, j = rm ? p : q;
        long double amax = 0, bmax = 0;
        for (int l = 0; l < g.k; ++l) {
          const long double av = fabsl(op_at(in.A, g.lda, rm, ta, i, l));
          const long double bv = fabsl(op_at(in.B, g.ldb, rm, tb, l, j));
          if (av > amax) amax = av;
          if (bv > bmax) bmax = bv;
        }
        const long double w = want[(size_t)j * g.m + i];
        if (!isfinite((double)w)) continue; /* overflowing in long double terms: class only */
        const long double tol = 16.0L * (g.k + 2) * DBL_EPSILON * scale[(size_t)j * g.m + i] +
                                fabsl((long double)g.alpha) * g.k * 0x1p-36L * amax * bmax +
                                (g.k + 4) * 2.0L * DBL_TRUE_MIN;
        if (fabsl((long double)x - w) > tol) {
          snprintf(why, sizeof why, "(%d,%d) = %.17g, want %.17Lg (bound %Lg)", i, j, x, w, tol);
          ok = 0;
        }
      }
    free(want);
    free(scale);
  }
  printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", g.name, ok ? "" : ": ", why);
  free(in.A);
  free(in.B);
  free(in.C);
  free(ref.C);
  free(got.C);
  return ok;
}

int main(void) {
  void* blas = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
  if (blas == NULL) {
    fprintf(stderr, "libblas.so.3 not found: %s\n", dlerror());
    return 77;
  }
  ref_dgemm = (dgemm_fn)dlsym(blas, "dgemm_");
  ref_cblas = (cblas_fn)dlsym(blas, "cblas_dgemm");
  if (ref_dgemm == NULL || ref_cblas == NULL) {
    fprintf(stderr, "libblas.so.3 lacks dgemm_ or cblas_dgemm\n");
    return 77;
  }
  const double nan = NAN, inf = INFINITY;
  const int CM = CblasColMajor, RM = CblasRowMajor;
  /* name, cblas, layout, ta, tb, cta, ctb, m, n, k, lda, ldb, ldc, alpha, beta, edit */
  const gcase cases[] = {
      /* Invalid arguments, Fortran. */
      {"dgemm_ transa 'X'", 0, 0, 'X', 'N', 0, 0, 2, 2, 2, 2, 2, 2, 1, 0.5, kNone},
      {"dgemm_ transb 'q'", 0, 0, 'N', 'q', 0, 0, 2, 2, 2, 2, 2, 2, 1, 0.5, kNone},
      {"dgemm_ transa NUL", 0, 0, '\0', 'N', 0, 0, 2, 2, 2, 2, 2, 2, 1, 0.5, kNone},
      {"dgemm_ m < 0", 0, 0, 'N', 'N', 0, 0, -1, 2, 2, 2, 2, 2, 1, 0.5, kNone},
      {"dgemm_ n < 0", 0, 0, 'T', 'N', 0, 0, 2, -7, 2, 2, 2, 2, 1, 0.5, kNone},
      {"dgemm_ k < 0", 0, 0, 'N', 'T', 0, 0, 2, 2, -2, 2, 2, 2, 1, 0.5, kNone},
      {"dgemm_ m = INT_MIN", 0, 0, 'N', 'N', 0, 0, -2147483647 - 1, 2, 2, 2, 2, 2, 1, 0.5, kNone},
      {"dgemm_ lda < m", 0, 0, 'N', 'N', 0, 0, 3, 2, 2, 2, 2, 3, 1, 0.5, kNone},
      {"dgemm_ lda < k (C)", 0, 0, 'C', 'N', 0, 0, 2, 2, 3, 2, 3, 2, 1, 0.5, kNone},
      {"dgemm_ lda = 0, m = 0", 0, 0, 'N', 'N', 0, 0, 0, 2, 2, 0, 2, 1, 1, 0.5, kNone},
      {"dgemm_ ldb < n (t)", 0, 0, 'N', 't', 0, 0, 2, 3, 2, 2, 2, 2, 1, 0.5, kNone},
      {"dgemm_ ldb < 0", 0, 0, 'N', 'N', 0, 0, 2, 2, 2, 2, -1, 2, 1, 0.5, kNone},
      {"dgemm_ ldc < m", 0, 0, 'N', 'N', 0, 0, 3, 2, 2, 3, 2, 2, 1, 0.5, kNone},
      {"dgemm_ ldc = 0, everything 0", 0, 0, 'N', 'N', 0, 0, 0, 0, 0, 1, 1, 0, 1, 0.5, kNone},
      {"dgemm_ bad op and m < 0", 0, 0, 'Z', 'N', 0, 0, -1, 2, 2, 2, 2, 2, 1, 0.5, kNone},
      {"dgemm_ m < 0 and ldc < 0", 0, 0, 'N', 'N', 0, 0, -1, 2, 2, 1, 2, -1, 1, 0.5, kNone},
      /* Invalid arguments, CBLAS. */
      {"cblas layout 0", 1, 0, 'N', 'N', 0, 0, 2, 2, 2, 2, 2, 2, 1, 0.5, kNone},
      {"cblas ColMajor transa 114", 1, CM, 'N', 'N', 114, 0, 2, 2, 2, 2, 2, 2, 1, 0.5, kNone},
      {"cblas RowMajor transb -1", 1, RM, 'N', 'N', 0, -1, 2, 2, 2, 2, 2, 2, 1, 0.5, kNone},
      {"cblas RowMajor m < 0", 1, RM, 'N', 'N', 0, 0, -1, 2, 2, 2, 2, 2, 1, 0.5, kNone},
      {"cblas ColMajor k < 0", 1, CM, 'N', 'N', 0, 0, 2, 2, -1, 2, 2, 2, 1, 0.5, kNone},
      {"cblas RowMajor lda < k", 1, RM, 'N', 'N', 0, 0, 2, 2, 3, 2, 3, 2, 1, 0.5, kNone},
      {"cblas RowMajor ldb < n (N)", 1, RM, 'N', 'N', 0, 0, 2, 3, 2, 2, 2, 3, 1, 0.5, kNone},
      {"cblas RowMajor ldc < n", 1, RM, 'N', 'N', 0, 0, 2, 3, 2, 2, 3, 2, 1, 0.5, kNone},
      {"cblas ColMajor ldc < m", 1, CM, 'T', 'N', 0, 0, 3, 2, 2, 2, 2, 2, 1, 0.5, kNone},
      /* Special values. */
      {"dgemm_ NaN in A", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1.5, 0.5, kNanA},
      {"dgemm_ +Inf in A (T)", 0, 0, 'T', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1.5, 0.5, kInfA},
      {"dgemm_ -Inf in B", 0, 0, 'N', 'T', 0, 0, 4, 3, 5, A_, A_, A_, -1, 0.5, kNinfB},
      {"dgemm_ NaN in C, beta 0.5", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, 0.5, kNanC},
      {"dgemm_ NaN in C, beta 0", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, 0.0, kNanC},
      {"dgemm_ Inf in C, beta 1", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, 1.0, kInfC},
      {"dgemm_ NaN in A, alpha 0", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 0.0, 0.5, kNanA},
      {"dgemm_ NaN everywhere, alpha = beta = 0", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 0, 0,
       kNanAll},
      {"dgemm_ alpha NaN", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, nan, 0.5, kNone},
      {"dgemm_ beta NaN", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, nan, kNone},
      {"dgemm_ beta Inf", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, inf, kNone},
      {"dgemm_ Inf times 0", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, 0.5, kInfTimesZero},
      {"dgemm_ +Inf and -Inf in one dot", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, 0,
       kInfMinusInf},
      {"cblas RowMajor NaN in A", 1, RM, 'N', 'T', 0, 0, 4, 3, 5, A_, A_, A_, 1, 0.5, kNanA},
      {"cblas RowMajor Inf in C", 1, RM, 'T', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, 2, kInfC},
      {"cblas RowMajor NaN in C, beta 0", 1, RM, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, 0, kNanC},
      {"dgemm_ subnormal A", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, 0, kSubA},
      {"dgemm_ subnormal A and B", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, 0, kSubAB},
      {"dgemm_ row of DBL_MAX/2 -> +Inf", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, 0,
       kHugeRow},
      {"cblas RowMajor row of -DBL_MAX/2", 1, RM, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, 0,
       kHugeNeg},
      {"dgemm_ products near 2^1000", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, 0.5,
       kBigProducts},
      {"dgemm_ all-zero A", 0, 0, 'N', 'N', 0, 0, 4, 3, 5, A_, A_, A_, 1, 0.5, kZeroA},
      {"dgemm_ all zero", 0, 0, 'T', 'T', 0, 0, 4, 3, 5, A_, A_, A_, 1, 1, kZeroAll},
      /* Shapes. */
      {"dgemm_ k = 2^18, m = 2, n = 3", 0, 0, 'N', 'N', 0, 0, 2, 3, 1 << 18, A_, A_, A_, 1, 0.5,
       kNone},
      {"cblas RowMajor k = 2^18, m = 3, n = 1", 1, RM, 'N', 'T', 0, 0, 3, 1, 1 << 18, A_, A_, A_, 1,
       0, kNone},
      {"dgemm_ m = 1", 0, 0, 'N', 'N', 0, 0, 1, 9, 7, A_, A_, A_, 1, 0.5, kNone},
      {"dgemm_ n = 1 (T)", 0, 0, 'T', 'N', 0, 0, 9, 1, 7, A_, A_, A_, 1, 0.5, kNone},
      {"cblas m = n = 1", 1, CM, 'N', 'N', 0, 0, 1, 1, 300, A_, A_, A_, 1, 0.5, kNone},
      {"dgemm_ lda far larger than rows", 0, 0, 'N', 'N', 0, 0, 3, 4, 5, 1000, A_, A_, 1, 0.5,
       kNone},
      {"dgemm_ ldc far larger than rows", 0, 0, 'T', 'T', 0, 0, 3, 4, 5, A_, A_, 3000, 1, 0.5,
       kNone},
      {"cblas RowMajor ldb far larger", 1, RM, 'N', 'N', 0, 0, 3, 4, 5, A_, 2000, A_, 1, 0.5,
       kNone},
      {"dgemm_ k = 0", 0, 0, 'N', 'N', 0, 0, 3, 4, 0, A_, A_, A_, 1, 0.5, kNone},
  };
  const int count = (int)(sizeof cases / sizeof cases[0]);
  int matched = 0;
  for (int i = 0; i < count; ++i) matched += run_case(cases[i]);
  printf(
      "bad input (intercepted vs reference BLAS): %d cases, %d matched (%d elements with the "
      "exact class where reference BLAS's order overflows)\n",
      count, matched, order_dependent);
  return matched != count;
}
