/* The ILP64 and scipy-openblas GEMM names (test_blas64.h), called as a client of
 * libozdgemm_test_blas64.so would call them. Run with libozdgemm.so preloaded, or not at all,
 * and argument `forwarded`: every valid call gives the bits of the test library's own
 * definition (reached with dlsym on its handle, past LD_PRELOAD), which received the caller's
 * integers exactly (64-bit ones above 2^32 included); every invalid call reaches the test
 * library's recorder once, under the name called, with reference BLAS's parameter number, and
 * leaves C untouched. With the reference host offload preloaded and argument `emulated`: the
 * valid calls are within check.h's bound of a long double reference (per part for complex
 * ones), and the invalid calls are forwarded as above. Exit 0 when everything holds. */
#include <dlfcn.h>

#include "check.h"
#include "test_blas64.h"

typedef struct {
  const char* name;
  int cblas, cplx, ilp64;
  void (*linked)(void); /* as the program links it: libozdgemm.so's when preloaded */
} entry;

#define ENTRY(NAME, CBLAS, CPLX, ILP64) \
  { #NAME, CBLAS, CPLX, ILP64, (void (*)(void))NAME }
static const entry entries[] = {
    ENTRY(scipy_dgemm_, 0, 0, 0),
    ENTRY(scipy_zgemm_, 0, 1, 0),
    ENTRY(scipy_cblas_dgemm, 1, 0, 0),
    ENTRY(scipy_cblas_zgemm, 1, 1, 0),
    ENTRY(scipy_dgemm_64_, 0, 0, 1),
    ENTRY(scipy_zgemm_64_, 0, 1, 1),
    ENTRY(scipy_cblas_dgemm64_, 1, 0, 1),
    ENTRY(scipy_cblas_zgemm64_, 1, 1, 1),
    ENTRY(dgemm_64_, 0, 0, 1),
    ENTRY(zgemm_64_, 0, 1, 1),
    ENTRY(cblas_dgemm64_, 1, 0, 1),
    ENTRY(cblas_zgemm64_, 1, 1, 1),
};
#undef ENTRY

enum { kRowMajor = 101, kColMajor = 102 };

typedef struct {
  int layout; /* CBLAS calls only */
  char ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
} call;

static int cblas_op(char t) { return t == 'N' ? 111 : t == 'T' ? 112 : t == 'C' ? 113 : 99; }

/* Calls fn, one of e's definitions, with x's integers in e's width (LP64: values that fit). */
static void invoke(const entry* e, void (*fn)(void), const call* x, const double* alpha,
                   const double* a, const double* b, const double* beta, double* c) {
  if (!e->cblas && !e->ilp64) {
    const int m = (int)x->m, n = (int)x->n, k = (int)x->k;
    const int lda = (int)x->lda, ldb = (int)x->ldb, ldc = (int)x->ldc;
    ((__typeof__(&scipy_dgemm_))fn)(&x->ta, &x->tb, &m, &n, &k, alpha, a, &lda, b, &ldb, beta, c,
                                    &ldc, 1, 1);
  } else if (!e->cblas) {
    ((__typeof__(&dgemm_64_))fn)(&x->ta, &x->tb, &x->m, &x->n, &x->k, alpha, a, &x->lda, b, &x->ldb,
                                 beta, c, &x->ldc, 1, 1);
  } else if (!e->ilp64 && !e->cplx) {
    ((__typeof__(&scipy_cblas_dgemm))fn)(x->layout, cblas_op(x->ta), cblas_op(x->tb), (int)x->m,
                                         (int)x->n, (int)x->k, *alpha, a, (int)x->lda, b,
                                         (int)x->ldb, *beta, c, (int)x->ldc);
  } else if (!e->ilp64) {
    ((__typeof__(&scipy_cblas_zgemm))fn)(x->layout, cblas_op(x->ta), cblas_op(x->tb), (int)x->m,
                                         (int)x->n, (int)x->k, alpha, a, (int)x->lda, b,
                                         (int)x->ldb, beta, c, (int)x->ldc);
  } else if (!e->cplx) {
    ((__typeof__(&cblas_dgemm64_))fn)(x->layout, cblas_op(x->ta), cblas_op(x->tb), x->m, x->n, x->k,
                                      *alpha, a, x->lda, b, x->ldb, *beta, c, x->ldc);
  } else {
    ((__typeof__(&cblas_zgemm64_))fn)(x->layout, cblas_op(x->ta), cblas_op(x->tb), x->m, x->n, x->k,
                                      alpha, a, x->lda, b, x->ldb, beta, c, x->ldc);
  }
}

static void* own_library = NULL;
static int failures = 0;

static void fail(const entry* e, const char* what, const char* detail) {
  fprintf(stderr, "FAIL %s %s: %s\n", e->name, what, detail);
  ++failures;
}

/* Element (i, j) of op(X) as (re, im): X stored column-major, or row-major, leading dimension
 * ld; op 'N', 'T' or 'C'. */
static void load(const double* x, int cplx, int64_t ld, int row_major, char op, int64_t i,
                 int64_t j, long double* re, long double* im) {
  const int64_t r = op == 'N' ? i : j, c = op == 'N' ? j : i;
  const double* p = x + (cplx ? 2 : 1) * (row_major ? r * ld + c : c * ld + r);
  *re = p[0];
  *im = cplx ? (op == 'C' ? -p[1] : p[1]) : 0.0L;
}

/* C (after) against alpha op(A) op(B) + beta C (before) in long double, per part, within
 * check.h's bound 16 (k + 2) eps scale (complex: 16 (2k + 4), as cblas_zgemm_test.c); the
 * padding of C unchanged. */
static int within_bound(const entry* e, const call* x, const double* alpha, const double* a,
                        const double* b, const double* beta, const double* c0, const double* c) {
  const int row = e->cblas && x->layout == kRowMajor, w = e->cplx ? 2 : 1;
  const int64_t lead = row ? x->n : x->m, outer = row ? x->m : x->n;
  const long double ar = alpha[0], ai = e->cplx ? alpha[1] : 0, br = beta[0],
                    bi = e->cplx ? beta[1] : 0;
  const long double terms = e->cplx ? 2 * x->k + 4 : x->k + 2;
  /* A single column (row) of C has no padding that belongs to the call's buffers. */
  const int64_t stored = outer > 1 ? x->ldc : lead;
  int bad = 0;
  for (int64_t q = 0; q < outer; ++q)
    for (int64_t p = 0; p < stored; ++p) {
      const int64_t at = w * (q * x->ldc + p);
      if (p >= lead) {
        bad += memcmp(&c[at], &c0[at], sizeof(double) * w) != 0;
        continue;
      }
      const int64_t i = row ? q : p, j = row ? p : q;
      long double sr = 0, si = 0, scale = 0;
      for (int64_t l = 0; l < x->k; ++l) {
        long double xr, xi, yr, yi;
        load(a, e->cplx, x->lda, row, x->ta, i, l, &xr, &xi);
        load(b, e->cplx, x->ldb, row, x->tb, l, j, &yr, &yi);
        sr += xr * yr - xi * yi;
        si += xr * yi + xi * yr;
        scale += (fabsl(xr) + fabsl(xi)) * (fabsl(yr) + fabsl(yi));
      }
      const long double cr = c0[at], ci = e->cplx ? c0[at + 1] : 0;
      const int read_c = br != 0 || bi != 0;
      const long double want_r = ar * sr - ai * si + (read_c ? br * cr - bi * ci : 0);
      const long double want_i = ar * si + ai * sr + (read_c ? br * ci + bi * cr : 0);
      scale = scale * (fabsl(ar) + fabsl(ai)) +
              (read_c ? (fabsl(br) + fabsl(bi)) * (fabsl(cr) + fabsl(ci)) : 0);
      const long double tol = 16.0L * terms * DBL_EPSILON * scale;
      if (fabsl(c[at] - want_r) > tol || (e->cplx && fabsl(c[at + 1] - want_i) > tol)) {
        if (bad < 3)
          fprintf(stderr, "  C(%lld,%lld) = %.17g, want %.17Lg (bound %Lg)\n", (long long)i,
                  (long long)j, c[at], want_r, tol);
        ++bad;
      }
    }
  return bad;
}

/* Stored extent (leading, outer) of a matrix whose op is r x c. */
static void extent(int row_major, char op, int64_t r, int64_t c, int64_t* lead, int64_t* outer) {
  const int64_t sr = op == 'N' ? r : c, sc = op == 'N' ? c : r; /* stored rows, columns */
  *lead = row_major ? sc : sr;
  *outer = row_major ? sr : sc;
}

/* One valid call: forwarded, the bits and integers of the test library's own call; emulated,
 * within the bound. */
static void valid_case(const entry* e, int emulated, call x, const double* alpha,
                       const double* beta, int64_t pad) {
  const int row = e->cblas && x.layout == kRowMajor, w = e->cplx ? 2 : 1;
  int64_t a_lead, a_outer, b_lead, b_outer, c_lead, c_outer;
  extent(row, x.ta, x.m, x.k, &a_lead, &a_outer);
  extent(row, x.tb, x.k, x.n, &b_lead, &b_outer);
  extent(row, 'N', x.m, x.n, &c_lead, &c_outer);
  if (x.lda == 0) x.lda = a_lead + pad;
  if (x.ldb == 0) x.ldb = b_lead + pad;
  if (x.ldc == 0) x.ldc = c_lead + pad;
  /* Only the first stored column (row) of an operand is read when it has one: a huge leading
   * dimension is then valid and safe. */
  const size_t na = (size_t)w * (a_outer > 1 ? (size_t)x.lda * a_outer : (size_t)a_lead);
  const size_t nb = (size_t)w * (b_outer > 1 ? (size_t)x.ldb * b_outer : (size_t)b_lead);
  const size_t nc = (size_t)w * (c_outer > 1 ? (size_t)x.ldc * c_outer : (size_t)c_lead);
  double* a = random_buffer(na);
  double* b = random_buffer(nb);
  double* c = random_buffer(nc);
  double* c0 = malloc(sizeof(double) * nc);
  double* own_c = malloc(sizeof(double) * nc);
  if (c0 == NULL || own_c == NULL) abort();
  memcpy(c0, c, sizeof(double) * nc);
  memcpy(own_c, c, sizeof(double) * nc);
  char what[128];
  snprintf(what, sizeof what, "%s%c%c m=%lld n=%lld k=%lld ld=%lld,%lld,%lld",
           !e->cblas ? ""
           : row     ? "RowMajor "
                     : "ColMajor ",
           x.ta, x.tb, (long long)x.m, (long long)x.n, (long long)x.k, (long long)x.lda,
           (long long)x.ldb, (long long)x.ldc);

  const int failures_before = failures;
  test_blas64_reset();
  invoke(e, e->linked, &x, alpha, a, b, beta, c);
  if (emulated) {
    if (within_bound(e, &x, alpha, a, b, beta, c0, c) != 0) fail(e, what, "C outside the bound");
  } else {
    int64_t got[6];
    const char* routine = test_blas64_last_call(got);
    const int64_t want[6] = {x.m, x.n, x.k, x.lda, x.ldb, x.ldc};
    if (routine == NULL || strcmp(routine, e->name) != 0)
      fail(e, what, "the test library's routine of the same name was not called");
    else if (memcmp(got, want, sizeof want) != 0)
      fail(e, what, "the integers arrived changed");
    void (*own)(void) = (void (*)(void))dlsym(own_library, e->name);
    if (own == NULL) {
      fail(e, what, "not in libozdgemm_test_blas64.so");
    } else {
      invoke(e, own, &x, alpha, a, b, beta, own_c);
      if (memcmp(c, own_c, sizeof(double) * nc) != 0)
        fail(e, what, "C differs from the test library's own call");
    }
  }
  if (failures == failures_before) printf("ok   %-22s %s\n", e->name, what);
  free(a);
  free(b);
  free(c);
  free(c0);
  free(own_c);
}

/* One invalid call: one report of parameter `info` under the name called, C untouched. */
static void invalid_case(const entry* e, call x, int64_t info) {
  enum { kLen = 2 * 64 };
  double a[kLen], b[kLen], c[kLen], c0[kLen];
  for (int i = 0; i < kLen; ++i) {
    a[i] = next_value();
    b[i] = next_value();
    c[i] = c0[i] = next_value();
  }
  const double alpha[2] = {1.0, 0.5}, beta[2] = {0.5, -0.25};
  test_blas64_reset();
  invoke(e, e->linked, &x, alpha, a, b, beta, c);
  const char* routine;
  int64_t got;
  const int reports = test_blas64_reports(&routine, &got);
  char what[160];
  snprintf(what, sizeof what,
           "invalid layout=%d %c%c m=%lld n=%lld k=%lld ld=%lld,%lld,%lld (want info %lld)",
           x.layout, x.ta, x.tb, (long long)x.m, (long long)x.n, (long long)x.k, (long long)x.lda,
           (long long)x.ldb, (long long)x.ldc, (long long)info);
  if (reports != 1 || strcmp(routine, e->name) != 0 || got != info) {
    char detail[96];
    snprintf(detail, sizeof detail, "%d report(s), last '%s' info %lld", reports, routine,
             (long long)got);
    fail(e, what, detail);
  } else if (memcmp(c, c0, sizeof c) != 0) {
    fail(e, what, "C was written");
  } else {
    printf("ok   %-22s %s\n", e->name, what);
  }
}

static void run_entry(const entry* e, int emulated) {
  const double alpha[2] = {0.75, -0.5}, beta[2] = {-1.25, 0.5}, zero[2] = {0.0, 0.0};
  const int64_t big = (int64_t)1 << 32;
  const char t = e->cplx ? 'C' : 'T';
  /* Valid calls: transposes, both layouts, beta = 0, padded leading dimensions. */
  valid_case(e, emulated, (call){kColMajor, 'N', 'N', 7, 5, 9, 0, 0, 0}, alpha, beta, 3);
  valid_case(e, emulated, (call){kColMajor, t, 'N', 13, 11, 17, 0, 0, 0}, alpha, zero, 2);
  valid_case(e, emulated, (call){kColMajor, 'N', t, 6, 9, 4, 0, 0, 0}, alpha, beta, 1);
  if (e->cblas) {
    valid_case(e, emulated, (call){kRowMajor, 'N', 'T', 7, 5, 9, 0, 0, 0}, alpha, beta, 3);
    valid_case(e, emulated, (call){kRowMajor, t, 'N', 5, 8, 3, 0, 0, 0}, alpha, zero, 2);
  }
  if (e->ilp64) {
    /* Leading dimensions above 2^32 (whose low 32 bits alone would read other elements): one
     * column of each operand, so only it is read. */
    valid_case(e, emulated, (call){kColMajor, 'N', 'N', 3, 1, 1, big + 7, big + 9, big + 11}, alpha,
               beta, 0);
  }

  /* Invalid calls, reference BLAS's checks in its order. */
  if (!e->cblas) {
    invalid_case(e, (call){0, 'X', 'N', 2, 2, 2, 2, 2, 2}, 1);
    invalid_case(e, (call){0, 'N', 'Y', 2, 2, 2, 2, 2, 2}, 2);
    invalid_case(e, (call){0, 'N', 'N', -1, 2, 2, 2, 2, 2}, 3);
    invalid_case(e, (call){0, 'N', 'N', 2, -1, 2, 2, 2, 2}, 4);
    invalid_case(e, (call){0, 'N', 'N', 2, 2, -1, 2, 2, 2}, 5);
    invalid_case(e, (call){0, 'N', 'N', 3, 2, 2, 2, 3, 3}, 8);
    invalid_case(e, (call){0, 'N', 'N', 2, 2, 3, 2, 2, 2}, 10);
    invalid_case(e, (call){0, 'N', 'N', 3, 2, 2, 3, 2, 2}, 13);
    if (e->ilp64) { /* invalid as 64-bit integers, valid in their low 32 bits */
      invalid_case(e, (call){0, 'N', 'N', -big + 2, 2, 2, 2, 2, 2}, 3);
      invalid_case(e, (call){0, 'N', 'N', 2, 2, 2, -big + 5, 2, 2}, 8);
    }
  } else {
    invalid_case(e, (call){99, 'N', 'N', 2, 2, 2, 2, 2, 2}, 1);
    invalid_case(e, (call){kColMajor, 'X', 'N', 2, 2, 2, 2, 2, 2}, 2);
    invalid_case(e, (call){kRowMajor, 'N', 'X', 2, 2, 2, 2, 2, 2}, 3);
    invalid_case(e, (call){kColMajor, 'N', 'N', -1, 2, 2, 2, 2, 2}, 4);
    invalid_case(e, (call){kRowMajor, 'N', 'N', 2, -1, 2, 2, 2, 2}, 5);
    invalid_case(e, (call){kColMajor, 'N', 'N', 2, 2, -1, 2, 2, 2}, 6);
    invalid_case(e, (call){kColMajor, 'N', 'N', 3, 2, 2, 2, 3, 3}, 9);
    invalid_case(e, (call){kRowMajor, 'N', 'N', 2, 2, 3, 2, 2, 2}, 9);
    invalid_case(e, (call){kRowMajor, 'N', 'N', 2, 3, 2, 2, 2, 3}, 11);
    invalid_case(e, (call){kColMajor, 'N', 'N', 3, 2, 2, 3, 2, 2}, 14);
    if (e->ilp64) {
      invalid_case(e, (call){kColMajor, 'N', 'N', -big + 2, 2, 2, 2, 2, 2}, 4);
      invalid_case(e, (call){kColMajor, 'N', 'N', 2, 2, 2, 2, 2, -big + 5}, 14);
    }
  }
}

int main(int argc, char** argv) {
  int emulated = 0;
  const int status = test_blas64_client_start(argc, argv, &emulated, &own_library);
  if (status != 0) return status;
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; ++i) run_entry(&entries[i], emulated);
  printf("ILP64 and scipy-openblas names (%s): %d failures\n", argv[1], failures);
  return failures != 0;
}
