/* The group-batch GEMM routines (test_batch_blas.h: cblas_dgemm_batch, dgemm_batch_ and the
 * complex forms), called as a client of MKL, OpenBLAS or AOCL would call them. Every matrix has
 * buffers of its own, C with padding, all compared whole. Argument:
 *   forwarded  linked to libozdgemm_test_batch.so, run alone or with libozdgemm.so preloaded in
 *              native mode: every call, valid or not, gives the bits of the test library's own
 *              call (reached past LD_PRELOAD), which received it under the name called; invalid
 *              ones reach its recorder with their parameter, C untouched.
 *   emulated   the same with the reference host offload preloaded (OZDGEMM_MODE=emulate, fixed
 *              s given as the second argument, libozdgemm.so's path the third): each matrix of
 *              a group the library takes (m, n, k > 0) equals ozdgemm_dgemm_reference /
 *              ozdgemm_zgemm_reference on it bit for bit (row-major: on its column-major
 *              transpose); the other groups, and calls forwarded whole (C overlapping, invalid),
 *              give the test library's bits.
 *   missing    linked -lozdgemm in place of -lblas (no library defines the routines): each
 *              matrix equals reference BLAS's cblas_dgemm / cblas_zgemm on it bit for bit;
 *              invalid calls leave C untouched.
 * Exit 0 when everything holds. */
#include <complex.h>
#include <math.h>

#include "batch_client.h"
#include "check.h"
#include "test_batch_blas.h"

enum { kMaxGroups = 5, kMaxMatrices = 16 };

static const routine kCblasD = {"cblas_dgemm_batch", 1, 0};
static const routine kFortranD = {"dgemm_batch_", 0, 0};
static const routine kCblasZ = {"cblas_zgemm_batch", 1, 1};
static const routine kFortranZ = {"zgemm_batch_", 0, 1};

/* One group: its flags, shape, padding of the leading dimensions, scalars and size. */
typedef struct {
  char ta, tb;
  int m, n, k, pad, size;
  double alpha[2], beta[2];
} group_t;

/* One call: its groups, and matrices' arrays as the routine receives them. */
typedef struct {
  int layout, count;
  group_t g[kMaxGroups];
  int nan_c;       /* C starts as NaN (groups with beta = 0 never read it) */
  int shared_c;    /* matrices 0 and 1 share one C (overlap: forwarded whole) */
  int group_count; /* what the routine receives (count, unless an invalid call says otherwise) */
  int bad_size;    /* group 0's size as received (invalid calls), else its own */
} call;

static int failures = 0;

typedef int (*dref_fn)(char, char, int64_t, int64_t, int64_t, double, const double*, int64_t,
                       const double*, int64_t, double, double*, int64_t, options_t);
typedef int (*zref_fn)(char, char, int64_t, int64_t, int64_t, double _Complex, const void*, int64_t,
                       const void*, int64_t, double _Complex, void*, int64_t, options_t);
static dref_fn dgemm_reference = NULL;
static zref_fn zgemm_reference = NULL;

/* Stored extents of group g's matrices (row-major stores the transposes). */
typedef struct {
  int ra, ca, rb, cb, rc, cc, lda, ldb, ldc;
} extents;
static extents extents_of(const call* x, const routine* r, int g) {
  const group_t* q = &x->g[g];
  const int row = r->cblas && x->layout == kRowMajor;
  extents e;
  e.ra = plain(q->ta) != row ? q->m : q->k, e.ca = plain(q->ta) != row ? q->k : q->m;
  e.rb = plain(q->tb) != row ? q->k : q->n, e.cb = plain(q->tb) != row ? q->n : q->k;
  e.rc = row ? q->n : q->m, e.cc = row ? q->m : q->n;
  e.lda = (e.ra > 1 ? e.ra : 1) + q->pad;
  e.ldb = (e.rb > 1 ? e.rb : 1) + q->pad;
  e.ldc = (e.rc > 1 ? e.rc : 1) + q->pad;
  return e;
}
static size_t span(int lead, int outer, int ld) {
  return outer <= 0 || lead <= 0 ? 1 : (size_t)ld * (outer - 1) + lead;
}

/* The arrays one call passes. */
typedef struct {
  char fta[kMaxGroups], ftb[kMaxGroups];
  int cta[kMaxGroups], ctb[kMaxGroups], m[kMaxGroups], n[kMaxGroups], k[kMaxGroups];
  int lda[kMaxGroups], ldb[kMaxGroups], ldc[kMaxGroups], size[kMaxGroups];
  double alpha[2 * kMaxGroups], beta[2 * kMaxGroups];
  const void* a[kMaxMatrices];
  const void* b[kMaxMatrices];
  void* c[kMaxMatrices];
} arrays;

static void fill_arrays(const call* x, const routine* r, arrays* s) {
  const int w = r->cplx ? 2 : 1;
  for (int g = 0; g < x->count; ++g) {
    const group_t* q = &x->g[g];
    const extents e = extents_of(x, r, g);
    s->fta[g] = q->ta, s->ftb[g] = q->tb;
    s->cta[g] = cblas_op(q->ta), s->ctb[g] = cblas_op(q->tb);
    s->m[g] = q->m, s->n[g] = q->n, s->k[g] = q->k;
    s->lda[g] = e.lda, s->ldb[g] = e.ldb, s->ldc[g] = e.ldc;
    s->size[g] = q->size;
    for (int p = 0; p < w; ++p) s->alpha[w * g + p] = q->alpha[p], s->beta[w * g + p] = q->beta[p];
  }
  if (x->count > 0 && x->bad_size != 0) s->size[0] = x->bad_size;
}

/* Calls the routine r of `lib` (null: as linked) with the arrays s and the matrices c. */
static void invoke(const routine* r, void* lib, const call* x, arrays* s, void** c) {
  void (*fn)(void) = NULL;
  if (lib != NULL) {
    fn = (void (*)(void))dlsym(lib, r->name);
    if (fn == NULL) {
      fprintf(stderr, "FAIL: %s not found: %s\n", r->name, dlerror());
      exit(1);
    }
  } else if (r->cblas) {
    fn = r->cplx ? (void (*)(void))cblas_zgemm_batch : (void (*)(void))cblas_dgemm_batch;
  } else {
    fn = r->cplx ? (void (*)(void))zgemm_batch_ : (void (*)(void))dgemm_batch_;
  }
  const int gc = x->group_count;
  if (!r->cblas)
    ((__typeof__(&dgemm_batch_))fn)(s->fta, s->ftb, s->m, s->n, s->k, s->alpha, s->a, s->lda, s->b,
                                    s->ldb, s->beta, c, s->ldc, &gc, s->size, 1, 1);
  else if (!r->cplx)
    ((__typeof__(&cblas_dgemm_batch))fn)(x->layout, s->cta, s->ctb, s->m, s->n, s->k, s->alpha,
                                         (const double**)s->a, s->lda, (const double**)s->b, s->ldb,
                                         s->beta, (double**)c, s->ldc, gc, s->size);
  else
    ((__typeof__(&cblas_zgemm_batch))fn)(x->layout, s->cta, s->ctb, s->m, s->n, s->k, s->alpha,
                                         s->a, s->lda, s->b, s->ldb, s->beta, c, s->ldc, gc,
                                         s->size);
}

/* Group g alone on the test library (a call of one group: its arrays from g on). */
static void own_group(const routine* r, const call* x, arrays* s, void** c, int g, int first) {
  call one = *x;
  one.count = one.group_count = 1;
  one.g[0] = x->g[g];
  one.bad_size = 0;
  arrays t;
  fill_arrays(&one, r, &t);
  for (int i = 0; i < x->g[g].size; ++i) t.a[i] = s->a[first + i], t.b[i] = s->b[first + i];
  invoke(r, client.own_library, &one, &t, c + first);
}

/* Matrix i of group g on one single GEMM of the reference (emulated: the library's; missing:
 * reference BLAS's), column-major after translation. */
static void reference_matrix(const routine* r, const call* x, const arrays* s, int g, int i,
                             void* c) {
  const group_t* q = &x->g[g];
  const int row = r->cblas && x->layout == kRowMajor;
  const char ta = (char)toupper((unsigned char)(row ? q->tb : q->ta));
  const char tb = (char)toupper((unsigned char)(row ? q->ta : q->tb));
  const int m = row ? q->n : q->m, n = row ? q->m : q->n;
  const void* a = row ? s->b[i] : s->a[i];
  const void* b = row ? s->a[i] : s->b[i];
  const int lda = row ? s->ldb[g] : s->lda[g], ldb = row ? s->lda[g] : s->ldb[g];
  if (client.mode == emulated) {
    const options_t o = {client.moduli, 0, 0};
    const int st = r->cplx
                       ? zgemm_reference(ta, tb, m, n, q->k, q->alpha[0] + q->alpha[1] * I, a, lda,
                                         b, ldb, q->beta[0] + q->beta[1] * I, c, s->ldc[g], o)
                       : dgemm_reference(ta, tb, m, n, q->k, q->alpha[0], a, lda, b, ldb,
                                         q->beta[0], c, s->ldc[g], o);
    if (st != 0) {
      fprintf(stderr, "FAIL: the reference refused a valid call\n");
      ++failures;
    }
  } else if (!r->cplx) {
    void (*f)(int, int, int, int, int, int, double, const void*, int, const void*, int, double,
              void*, int) =
        (void (*)(int, int, int, int, int, int, double, const void*, int, const void*, int, double,
                  void*, int))dlsym(client.reference_blas, "cblas_dgemm");
    f(kColMajor, cblas_op(ta), cblas_op(tb), m, n, q->k, q->alpha[0], a, lda, b, ldb, q->beta[0], c,
      s->ldc[g]);
  } else {
    void (*f)(int, int, int, int, int, int, const void*, const void*, int, const void*, int,
              const void*, void*, int) =
        (void (*)(int, int, int, int, int, int, const void*, const void*, int, const void*, int,
                  const void*, void*, int))dlsym(client.reference_blas, "cblas_zgemm");
    f(kColMajor, cblas_op(ta), cblas_op(tb), m, n, q->k, q->alpha, a, lda, b, ldb, q->beta, c,
      s->ldc[g]);
  }
}

/* A group the library serves matrix by matrix in the emulated mode (the reference offload takes
 * every non-trivial product). */
static int served(const call* x, int g) {
  const group_t* q = &x->g[g];
  return client.mode == emulated && !x->shared_c && q->m > 0 && q->n > 0 && q->k > 0 && q->size > 0;
}

static void describe(const routine* r, const call* x, char* what, size_t len) {
  const char* layout = !r->cblas                ? ""
                       : x->layout == kRowMajor ? "RowMajor "
                       : x->layout == kColMajor ? "ColMajor "
                                                : "layout 99 ";
  int at = snprintf(what, len, "%s%d group(s):", layout, x->group_count);
  for (int g = 0; g < x->count && at < (int)len; ++g)
    at += snprintf(what + at, len - at, " %c%c %dx%dx%d x%d%s", x->g[g].ta, x->g[g].tb, x->g[g].m,
                   x->g[g].n, x->g[g].k, x->g[g].size,
                   x->g[g].alpha[0] == 0 && x->g[g].alpha[1] == 0 ? " alpha=0"
                   : x->g[g].beta[0] == 0 && x->g[g].beta[1] == 0 ? " beta=0"
                                                                  : "");
  if (x->shared_c && at < (int)len) snprintf(what + at, len - at, " (C shared)");
}

/* One call: valid (info 0) against what the mode expects, or invalid, reported by the test
 * library as parameter `info` (missing: by nobody), C untouched. */
static void run_case(const routine* r, call x, int info) {
  const int w = r->cplx ? 2 : 1;
  arrays s;
  fill_arrays(&x, r, &s);
  double* bufs[3 * kMaxMatrices];
  size_t lens[kMaxMatrices];
  double* want[kMaxMatrices];
  void* c[kMaxMatrices];
  void* cw[kMaxMatrices];
  int total = 0;
  for (int g = 0; g < x.count; ++g)
    for (int i = 0; i < x.g[g].size; ++i, ++total) {
      const extents e = extents_of(&x, r, g);
      bufs[3 * total] = random_buffer(w * span(e.ra, e.ca, e.lda));
      bufs[3 * total + 1] = random_buffer(w * span(e.rb, e.cb, e.ldb));
      lens[total] = w * span(e.rc, e.cc, e.ldc);
      bufs[3 * total + 2] = random_buffer(lens[total]);
      if (x.nan_c)
        for (size_t l = 0; l < lens[total]; ++l) bufs[3 * total + 2][l] = NAN;
      s.a[total] = bufs[3 * total];
      s.b[total] = bufs[3 * total + 1];
    }
  for (int i = 0; i < total; ++i) {
    const int src = x.shared_c && i == 1 ? 0 : i;
    if (src != i) lens[i] = lens[0];
    c[i] = bufs[3 * src + 2];
    want[i] = malloc(sizeof(double) * lens[i]);
    if (want[i] == NULL) abort();
    memcpy(want[i], c[i], sizeof(double) * lens[i]);
    cw[i] = want[i];
  }
  if (x.shared_c) cw[1] = cw[0];
  char what[320];
  describe(r, &x, what, sizeof what);
  const int before = failures;
  test_batch_reset_if_any();
  invoke(r, NULL, &x, &s, c);
  if (info != 0) {
    const char* got_routine;
    int got;
    const int reports = test_batch_reports_if_any(&got_routine, &got);
    const int want_reports = client.mode == missing ? 0 : 1;
    if (reports != want_reports ||
        (want_reports == 1 && (strcmp(got_routine, r->name) != 0 || got != info))) {
      fprintf(stderr, "FAIL %s invalid %s: %d report(s), last '%s' info %d, want %d\n", r->name,
              what, reports, got_routine, got, info);
      ++failures;
    }
  } else if (client.mode == forwarded || x.shared_c) {
    if (client.mode == missing) { /* one after the other, in order */
      int i = 0;
      for (int g = 0; g < x.count; ++g)
        for (int j = 0; j < x.g[g].size; ++j, ++i) reference_matrix(r, &x, &s, g, i, cw[i]);
    } else {
      invoke(r, client.own_library, &x, &s, cw);
    }
    if (client.mode != missing && (test_batch_last_call_if_any() == NULL ||
                                   strcmp(test_batch_last_call_if_any(), r->name) != 0)) {
      fprintf(stderr, "FAIL %s %s: the test library's routine was not called\n", r->name, what);
      ++failures;
    }
  } else {
    int first = 0;
    for (int g = 0; g < x.count; first += x.g[g].size, ++g) {
      if (client.mode == emulated && !served(&x, g)) {
        own_group(r, &x, &s, cw, g, first);
        continue;
      }
      for (int i = first; i < first + x.g[g].size; ++i) reference_matrix(r, &x, &s, g, i, cw[i]);
    }
  }
  for (int i = 0; i < total; ++i)
    if (!(x.shared_c && i == 1) && memcmp(c[i], want[i], sizeof(double) * lens[i]) != 0) {
      size_t l = 0;
      const double* got = c[i];
      while (memcmp(&got[l], &want[i][l], sizeof(double)) == 0) ++l;
      fprintf(stderr, "FAIL %s %s: matrix %d, double %zu: %.17g, want %.17g\n", r->name, what, i, l,
              got[l], want[i][l]);
      ++failures;
      break;
    }
  if (failures == before) printf("ok   %-18s %s%s\n", r->name, info != 0 ? "invalid " : "", what);
  for (int i = 0; i < 3 * total; ++i) free(bufs[i]);
  for (int i = 0; i < total; ++i) free(want[i]);
}

static group_t grp(char ta, char tb, int m, int n, int k, int pad, int size) {
  group_t q = {ta, tb, m, n, k, pad, size, {0.75, -0.5}, {-1.25, 0.5}};
  return q;
}

static call one_group(int layout, group_t q) {
  call x = {layout, 1, {q}, 0, 0, 1, 0};
  return x;
}

static void run_routine(const routine* r) {
  static const char ops[] = "NTC";
  const int layouts[2] = {kColMajor, kRowMajor};
  for (int l = 0; l < (r->cblas ? 2 : 1); ++l) {
    const int layout = r->cblas ? layouts[l] : kColMajor;
    /* Every op pair, padded leading dimensions. */
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        run_case(r, one_group(layout, grp(ops[i], ops[j], 5, 4, 3, 2, 2)), 0);
    /* Groups the library takes between groups it leaves (k = 0, m = 0, no matrix): each run of
     * the latter is one call of the CPU BLAS's routine. */
    call x = {
        layout,
        5,
        {grp('N', 'T', 6, 5, 4, 1, 2), grp('T', 'N', 3, 4, 0, 0, 2), grp('N', 'N', 0, 4, 3, 1, 1),
         grp('C', 'N', 4, 6, 5, 0, 3), grp('N', 'N', 2, 2, 2, 0, 0)},
        0,
        0,
        5,
        0};
    run_case(r, x, 0);
    /* alpha = 0 (real: a trivial call the host path leaves to the CPU BLAS); beta = 0 with C NaN
     * (never read). */
    if (!r->cplx) {
      call z = one_group(layout, grp('N', 'N', 4, 3, 5, 1, 2));
      z.g[0].alpha[0] = z.g[0].alpha[1] = 0.0;
      run_case(r, z, 0);
    }
    call z = one_group(layout, grp('T', 'T', 4, 3, 5, 1, 3));
    z.g[0].beta[0] = z.g[0].beta[1] = 0.0;
    z.nan_c = 1;
    run_case(r, z, 0);
    /* Two matrices share one C: forwarded whole (missing: in order). */
    z = one_group(layout, grp('N', 'N', 3, 3, 2, 0, 2));
    z.shared_c = 1;
    run_case(r, z, 0);
    /* No group; groups of no matrix. */
    z = one_group(layout, grp('N', 'N', 3, 3, 2, 0, 0));
    z.count = z.group_count = 0;
    run_case(r, z, 0);
    run_case(r, one_group(layout, grp('N', 'N', 3, 3, 2, 0, 0)), 0);
  }

  /* Invalid calls, the test library's checks in its order; group 1 is the bad one where a
   * parameter is a group's, so that group 0 must not have been computed either. */
  const int s = r->cblas ? 1 : 0;
  const call v = {kColMajor, 2, {grp('N', 'N', 2, 2, 2, 0, 1), grp('N', 'N', 2, 2, 2, 0, 1)}, 0, 0,
                  2,         0};
  call x = v;
  if (r->cblas) {
    x.layout = 99;
    run_case(r, x, 1);
  }
  x = v;
  x.g[1].ta = 'X';
  run_case(r, x, 1 + s);
  x = v;
  x.g[1].m = -1;
  x.g[1].size = 0; /* no matrix to allocate for a negative size */
  run_case(r, x, 3 + s);
  x = v;
  x.group_count = -1;
  run_case(r, x, 14 + s);
  x = v;
  x.bad_size = -1;
  run_case(r, x, 15 + s);
}

int main(int argc, char** argv) {
  const int status = batch_client_start(argc, argv);
  if (status != 0) return status;
  if (client.mode == emulated &&
      ((dgemm_reference = (dref_fn)batch_client_api("ozdgemm_dgemm_reference")) == NULL ||
       (zgemm_reference = (zref_fn)batch_client_api("ozdgemm_zgemm_reference")) == NULL))
    return 1;
  const routine* routines[] = {&kCblasD, &kFortranD, &kCblasZ, &kFortranZ};
  for (size_t i = 0; i < sizeof routines / sizeof routines[0]; ++i) run_routine(routines[i]);
  printf("group-batch routines (%s): %d failures\n", argv[1], failures);
  return failures != 0;
}
