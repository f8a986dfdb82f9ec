/* The strided-batch GEMM extensions (test_batch_blas.h), called as a client of MKL or OpenBLAS
 * would call them. Argument:
 *   forwarded  linked to libozdgemm_test_batch.so, run alone or with libozdgemm.so preloaded in
 *              native mode: every call, valid or not, gives the bits of the test library's own
 *              call (reached past LD_PRELOAD), which received it (under the name called);
 *              invalid ones reach its recorder with their parameter, C untouched.
 *   emulated   the same, with the reference host offload preloaded (OZDGEMM_MODE=emulate, fixed
 *              s, given as the second argument, libozdgemm.so's path the third): each matrix of a
 * real batch the library serves equals ozdgemm_dgemm_reference on that matrix bit for bit
 * (row-major: on its column-major transpose, as a single cblas_dgemm is served); the calls it
 * forwards (complex batches, Fortran calls whose TRANSA and TRANSB differ, overlapping C) give the
 * test library's bits. missing    linked -lozdgemm in place of -lblas (no library defines the
 * routines): each matrix equals reference BLAS's cblas_dgemm / cblas_zgemm on it bit for bit
 *              (complex: where the stride units of MKL and OpenBLAS coincide; elsewhere, and for
 *              invalid calls, C untouched).
 * Gaps between matrices and the padding of C are compared too (the whole buffer). Exit 0 when
 * everything holds. */
#include <math.h>

#include "batch_client.h"
#include "check.h"
#include "test_batch_blas.h"

static const routine kFortranD = {"dgemm_batch_strided_", 0, 0};
static const routine kFortranZ = {"zgemm_batch_strided_", 0, 1};
static const routine kCblasD = {"cblas_dgemm_batch_strided", 1, 0};
static const routine kCblasZ = {"cblas_zgemm_batch_strided", 1, 1};

typedef struct {
  int layout; /* CBLAS calls only */
  char ta, tb;
  int m, n, k, lda, ldb, ldc, sa, sb, sc, count;
  double alpha[2], beta[2];
  int nan_c; /* C starts as NaN (with beta = 0: never read) */
} call;

static int failures = 0;

typedef int (*reference_fn)(char, char, int64_t, int64_t, int64_t, double, const double*, int64_t,
                            const double*, int64_t, double, double*, int64_t, options_t);
static reference_fn dgemm_reference = NULL;

/* Calls the routine r of `lib` (null: as linked) on x. */
static void invoke(const routine* r, void* lib, const call* x, const double* a, const double* b,
                   double* c) {
  void (*fn)(void) = NULL;
  if (lib != NULL) {
    fn = (void (*)(void))dlsym(lib, r->name);
    if (fn == NULL) {
      fprintf(stderr, "FAIL: %s not found: %s\n", r->name, dlerror());
      exit(1);
    }
  } else if (r->cblas) {
    fn = r->cplx ? (void (*)(void))cblas_zgemm_batch_strided
                 : (void (*)(void))cblas_dgemm_batch_strided;
  } else {
    fn = r->cplx ? (void (*)(void))zgemm_batch_strided_ : (void (*)(void))dgemm_batch_strided_;
  }
  if (!r->cblas) {
    ((__typeof__(&dgemm_batch_strided_))fn)(&x->ta, &x->tb, &x->m, &x->n, &x->k, x->alpha, a,
                                            &x->lda, &x->sa, b, &x->ldb, &x->sb, x->beta, c,
                                            &x->ldc, &x->sc, &x->count, 1, 1);
  } else if (!r->cplx) {
    ((__typeof__(&cblas_dgemm_batch_strided))fn)(
        x->layout, cblas_op(x->ta), cblas_op(x->tb), x->m, x->n, x->k, x->alpha[0], a, x->lda,
        x->sa, b, x->ldb, x->sb, x->beta[0], c, x->ldc, x->sc, x->count);
  } else {
    ((__typeof__(&cblas_zgemm_batch_strided))fn)(x->layout, cblas_op(x->ta), cblas_op(x->tb), x->m,
                                                 x->n, x->k, x->alpha, a, x->lda, x->sa, b, x->ldb,
                                                 x->sb, x->beta, c, x->ldc, x->sc, x->count);
  }
}

/* Matrix p of a column-major (after translation) call, on one single GEMM of the reference. */
typedef struct {
  char ta, tb;
  int m, n, k, lda, ldb;
  const double *a, *b;
} column_major;

static column_major translate(const call* x, int cblas, int w, const double* a, const double* b,
                              int p) {
  const double* ap = a + (size_t)w * p * x->sa;
  const double* bp = b + (size_t)w * p * x->sb;
  if (cblas && x->layout == kRowMajor)
    return (column_major){x->tb, x->ta, x->n, x->m, x->k, x->ldb, x->lda, bp, ap};
  return (column_major){(char)toupper((unsigned char)x->ta),
                        (char)toupper((unsigned char)x->tb),
                        x->m,
                        x->n,
                        x->k,
                        x->lda,
                        x->ldb,
                        ap,
                        bp};
}

/* The expected C in place (want: a copy of C before the call): the test library's own call, or
 * matrix by matrix the reference (emulated, `served`: the library's; missing: reference BLAS's). */
static void expected(const routine* r, const call* x, const double* a, const double* b,
                     double* want, int served) {
  const int w = r->cplx ? 2 : 1;
  if (client.mode == forwarded || (client.mode == emulated && !served)) {
    invoke(r, client.own_library, x, a, b, want);
    return;
  }
  for (int p = 0; p < x->count; ++p) {
    const column_major g = translate(x, r->cblas, w, a, b, p);
    double* cp = want + (size_t)w * p * x->sc;
    if (client.mode == emulated) {
      const options_t o = {client.moduli, 0, 0};
      if (dgemm_reference(g.ta, g.tb, g.m, g.n, g.k, x->alpha[0], g.a, g.lda, g.b, g.ldb,
                          x->beta[0], cp, x->ldc, o) != 0) {
        fprintf(stderr, "FAIL: ozdgemm_dgemm_reference refused a valid call\n");
        ++failures;
      }
    } else if (!r->cplx) {
      void (*f)(int, int, int, int, int, int, double, const double*, int, const double*, int,
                double, double*, int) =
          (void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int,
                    double, double*, int))dlsym(client.reference_blas, "cblas_dgemm");
      f(kColMajor, cblas_op(g.ta), cblas_op(g.tb), g.m, g.n, g.k, x->alpha[0], g.a, g.lda, g.b,
        g.ldb, x->beta[0], cp, x->ldc);
    } else {
      void (*f)(int, int, int, int, int, int, const void*, const void*, int, const void*, int,
                const void*, void*, int) =
          (void (*)(int, int, int, int, int, int, const void*, const void*, int, const void*, int,
                    const void*, void*, int))dlsym(client.reference_blas, "cblas_zgemm");
      f(kColMajor, cblas_op(g.ta), cblas_op(g.tb), g.m, g.n, g.k, x->alpha, g.a, g.lda, g.b, g.ldb,
        x->beta, cp, x->ldc);
    }
  }
}

/* Doubles a matrix of `lead` x `outer` storage spans with leading dimension ld. */
static size_t span(int lead, int outer, int ld) {
  return outer == 0 || lead == 0 ? 0 : (size_t)ld * (outer - 1) + lead;
}

/* One valid call, checked against what the mode expects of it. */
static void valid_case(const routine* r, call x) {
  const int row = r->cblas && x.layout == kRowMajor, w = r->cplx ? 2 : 1;
  /* Stored extents: row-major stores the transposes. */
  const int ra = plain(x.ta) != row ? x.m : x.k, ca = plain(x.ta) != row ? x.k : x.m;
  const int rb = plain(x.tb) != row ? x.k : x.n, cb = plain(x.tb) != row ? x.n : x.k;
  const int rc = row ? x.n : x.m, cc = row ? x.m : x.n;
  const size_t last = x.count > 0 ? (size_t)x.count - 1 : 0;
  const size_t na = w * (last * x.sa + span(ra, ca, x.lda) + 3);
  const size_t nb = w * (last * x.sb + span(rb, cb, x.ldb) + 3);
  const size_t nc = w * (last * x.sc + span(rc, cc, x.ldc) + 3);
  /* Served per matrix in the emulated mode: a real non-trivial batch that MKL and OpenBLAS read
   * alike (Fortran: the same upper-case op for A and B), its matrices of C apart. Missing: complex
   * strides whose two meanings differ leave C untouched. */
  const int same_op = r->cblas || (isupper((unsigned char)x.ta) && isupper((unsigned char)x.tb) &&
                                   (x.ta == 'N') == (x.tb == 'N'));
  const int apart = x.count <= 1 || x.sc >= (int)span(rc, cc, x.ldc);
  const int served = client.mode == emulated && !r->cplx && x.count > 0 && x.m > 0 && x.n > 0 &&
                     x.k > 0 && same_op && apart;
  const int untouched =
      client.mode == missing && r->cplx && x.count > 1 && (x.sa != 0 || x.sb != 0 || x.sc != 0);
  double* a = random_buffer(na);
  double* b = random_buffer(nb);
  double* c = random_buffer(nc);
  double* want = malloc(sizeof(double) * nc);
  if (want == NULL) abort();
  if (x.nan_c)
    for (size_t i = 0; i < nc; ++i) c[i] = NAN;
  memcpy(want, c, sizeof(double) * nc);
  char what[160];
  snprintf(what, sizeof what, "%s%c%c m=%d n=%d k=%d ld=%d,%d,%d strides=%d,%d,%d count=%d%s",
           !r->cblas ? ""
           : row     ? "RowMajor "
                     : "ColMajor ",
           x.ta, x.tb, x.m, x.n, x.k, x.lda, x.ldb, x.ldc, x.sa, x.sb, x.sc, x.count,
           x.alpha[0] == 0  ? " alpha=0"
           : x.beta[0] == 0 ? " beta=0"
                            : "");
  const int before = failures;
  test_batch_reset_if_any();
  invoke(r, NULL, &x, a, b, c);
  if (!untouched) expected(r, &x, a, b, want, served);
  if (client.mode != missing && !served) {
    const char* last_call = test_batch_last_call_if_any();
    if (last_call == NULL || strcmp(last_call, r->name) != 0) {
      fprintf(stderr, "FAIL %s %s: the test library's routine was not called\n", r->name, what);
      ++failures;
    }
  }
  if (memcmp(c, want, sizeof(double) * nc) != 0) {
    size_t i = 0;
    while (memcmp(&c[i], &want[i], sizeof(double)) == 0) ++i;
    fprintf(stderr, "FAIL %s %s: C differs at double %zu: %.17g, want %.17g\n", r->name, what, i,
            c[i], want[i]);
    ++failures;
  }
  if (failures == before) printf("ok   %-26s %s\n", r->name, what);
  free(a);
  free(b);
  free(c);
  free(want);
}

/* One invalid call: the test library reports parameter `info` once under the name called
 * (missing: nobody reports); C untouched. */
static void invalid_case(const routine* r, call x, int info) {
  enum { kLen = 2 * 64 };
  double a[kLen], b[kLen], c[kLen], c0[kLen];
  for (int i = 0; i < kLen; ++i) {
    a[i] = next_value();
    b[i] = next_value();
    c[i] = c0[i] = next_value();
  }
  test_batch_reset_if_any();
  invoke(r, NULL, &x, a, b, c);
  const char* got_routine;
  int got;
  const int reports = test_batch_reports_if_any(&got_routine, &got);
  char what[160];
  snprintf(what, sizeof what,
           "invalid layout=%d %c%c m=%d n=%d k=%d ld=%d,%d,%d strides=%d,%d,%d count=%d (info %d)",
           x.layout, x.ta, x.tb, x.m, x.n, x.k, x.lda, x.ldb, x.ldc, x.sa, x.sb, x.sc, x.count,
           info);
  const int want_reports = client.mode == missing ? 0 : 1;
  if (reports != want_reports ||
      (want_reports == 1 && (strcmp(got_routine, r->name) != 0 || got != info))) {
    fprintf(stderr, "FAIL %s %s: %d report(s), last '%s' info %d\n", r->name, what, reports,
            got_routine, got);
    ++failures;
  } else if (memcmp(c, c0, sizeof c) != 0) {
    fprintf(stderr, "FAIL %s %s: C was written\n", r->name, what);
    ++failures;
  } else {
    printf("ok   %-26s %s\n", r->name, what);
  }
}

static call make(int layout, char ta, char tb, int m, int n, int k, int pad, int gap, int count) {
  call x = {layout, ta, tb, m, n, k, 0, 0, 0, 0, 0, 0, count, {0.75, -0.5}, {-1.25, 0.5}, 0};
  const int row = layout == kRowMajor;
  const int ra = plain(ta) != row ? m : k, ca = plain(ta) != row ? k : m;
  const int rb = plain(tb) != row ? k : n, cb = plain(tb) != row ? n : k;
  const int rc = row ? n : m, cc = row ? m : n;
  x.lda = (ra > 1 ? ra : 1) + pad;
  x.ldb = (rb > 1 ? rb : 1) + pad;
  x.ldc = (rc > 1 ? rc : 1) + pad;
  x.sa = (int)span(ra, ca, x.lda) + gap;
  x.sb = (int)span(rb, cb, x.ldb) + gap;
  x.sc = (int)span(rc, cc, x.ldc) + gap;
  return x;
}

static void run_routine(const routine* r) {
  static const char ops[] = "NTC";
  const int layouts[2] = {kColMajor, kRowMajor};
  for (int l = 0; l < (r->cblas ? 2 : 1); ++l) {
    const int layout = r->cblas ? layouts[l] : kColMajor;
    /* Every op pair, padded leading dimensions, gaps between matrices. */
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) valid_case(r, make(layout, ops[i], ops[j], 5, 4, 3, 2, 7, 3));
    /* Broadcast A, then B (stride 0). */
    call x = make(layout, 'N', 'T', 6, 5, 4, 1, 3, 4);
    x.sa = 0;
    valid_case(r, x);
    x = make(layout, 'T', 'N', 6, 5, 4, 1, 3, 4);
    x.sb = 0;
    valid_case(r, x);
    /* alpha = 0; beta = 0 with C NaN (never read); one matrix; no matrix. */
    x = make(layout, 'N', 'N', 4, 3, 5, 1, 2, 3);
    x.alpha[0] = x.alpha[1] = 0.0;
    valid_case(r, x);
    x = make(layout, 'T', 'T', 4, 3, 5, 1, 2, 3);
    x.beta[0] = x.beta[1] = 0.0;
    x.nan_c = 1;
    valid_case(r, x);
    valid_case(r, make(layout, 'N', 'N', 7, 6, 5, 0, 0, 1));
    valid_case(r, make(layout, 'N', 'N', 7, 6, 5, 0, 0, 0));
    /* The matrices of C overlap: the library forwards (missing: runs them in order). */
    x = make(layout, 'N', 'N', 3, 3, 2, 0, 0, 3);
    x.sc = 2;
    valid_case(r, x);
    /* Every stride 0 (complex: both meanings coincide). */
    x = make(layout, 'N', 'C', 3, 2, 4, 0, 0, 2);
    x.sa = x.sb = x.sc = 0;
    valid_case(r, x);
  }
  if (!r->cblas) {
    /* Lower-case flags: MKL reads them, OpenBLAS does not; forwarded. */
    valid_case(r, make(kColMajor, 'n', 'n', 5, 4, 3, 1, 1, 2));
    valid_case(r, make(kColMajor, 't', 'T', 5, 4, 3, 1, 1, 2));
  }

  /* Invalid calls, the test library's checks in its order. */
  const int s = r->cblas ? 1 : 0;
  const call v = make(kColMajor, 'N', 'N', 2, 2, 2, 0, 0, 2);
  call x = v;
  if (r->cblas) {
    x.layout = 99;
    invalid_case(r, x, 1);
    x = v;
    x.layout = kRowMajor;
    x.n = 3; /* row-major B (k x n) needs ldb >= n */
    invalid_case(r, x, 12);
  }
  x = v;
  x.ta = 'X';
  invalid_case(r, x, 1 + s);
  x = v;
  x.m = -1;
  invalid_case(r, x, 3 + s);
  x = v;
  x.lda = 1;
  invalid_case(r, x, 8 + s);
  x = v;
  x.sa = -1;
  invalid_case(r, x, 9 + s);
  x = v;
  x.ldc = 1;
  invalid_case(r, x, 15 + s);
  x = v;
  x.count = -1;
  invalid_case(r, x, 17 + s);
}

int main(int argc, char** argv) {
  const int status = batch_client_start(argc, argv);
  if (status != 0) return status;
  if (client.mode == emulated &&
      (dgemm_reference = (reference_fn)batch_client_api("ozdgemm_dgemm_reference")) == NULL)
    return 1;
  const routine* routines[] = {&kCblasD, &kFortranD, &kCblasZ, &kFortranZ};
  for (size_t i = 0; i < sizeof routines / sizeof routines[0]; ++i) run_routine(routines[i]);
  printf("strided-batch routines (%s): %d failures\n", argv[1], failures);
  return failures != 0;
}
