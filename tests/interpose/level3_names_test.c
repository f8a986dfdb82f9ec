/* The Level-3 routines other than GEMM under the ILP64 and scipy-openblas names (test_blas64.h),
 * called as a client of libozdgemm_test_blas64.so would call them; blas64_names_test.c's
 * sibling. Argument `forwarded` (run with libozdgemm.so preloaded, or not at all): every valid
 * call gives the bits of the test library's own definition (reached with dlsym on its handle,
 * past LD_PRELOAD), which received the caller's integers exactly (leading dimensions above 2^32
 * included); every invalid call reaches the test library's recorder once, under the name
 * called, with reference BLAS's parameter number, and leaves every operand untouched. Argument
 * `emulated` (the reference host offload preloaded, OZDGEMM_LEVEL3_BLOCK=1): the valid calls
 * are within a normwise bound of the test library's own result, and the diagonal blocks ran on
 * the test library's Fortran routine of the name's family. Exit 0 when everything holds. */
#include <dlfcn.h>

#include "check.h"
#include "test_blas64.h"

enum shape { RANK_K, RANK_2K, SYMM, TRI };

typedef struct {
  const char* name;
  const char* routine; /* dsyrk, ... */
  const char* fortran; /* the family's Fortran name of the routine */
  enum shape shape;
  int cblas, cplx, ilp64;
  void (*linked)(void); /* as the program links it: libozdgemm.so's when preloaded */
} entry;

#define TB_ENTRIES(R, SHAPE, CPLX, AL, BE)                                                          \
  {#R "_64_", #R, #R "_64_", SHAPE, 0, CPLX, 1, (void (*)(void))R##_64_},                           \
      {"cblas_" #R "64_", #R, #R "_64_", SHAPE, 1, CPLX, 1, (void (*)(void))cblas_##R##64_},        \
      {"scipy_" #R "_", #R, "scipy_" #R "_", SHAPE, 0, CPLX, 0, (void (*)(void))scipy_##R##_},      \
      {"scipy_cblas_" #R, #R, "scipy_" #R "_", SHAPE, 1, CPLX, 0, (void (*)(void))scipy_cblas_##R}, \
      {"scipy_" #R "_64_",                                                                          \
       #R,                                                                                          \
       "scipy_" #R "_64_",                                                                          \
       SHAPE,                                                                                       \
       0,                                                                                           \
       CPLX,                                                                                        \
       1,                                                                                           \
       (void (*)(void))scipy_##R##_64_},                                                            \
      {"scipy_cblas_" #R "64_",                                                                     \
       #R,                                                                                          \
       "scipy_" #R "_64_",                                                                          \
       SHAPE,                                                                                       \
       1,                                                                                           \
       CPLX,                                                                                        \
       1,                                                                                           \
       (void (*)(void))scipy_cblas_##R##64_},
static const entry entries[] = {TB_LEVEL3_ROUTINES(TB_ENTRIES)};
#undef TB_ENTRIES

enum { kRowMajor = 101, kColMajor = 102 };

/* f: the CHARACTER arguments (uplo trans | side uplo | side uplo transa diag); s1, s2: the
 * sizes (n k | m n | m n); a zero leading dimension is filled in by valid_case. */
typedef struct {
  int layout; /* CBLAS calls only */
  char f[4];
  int64_t s1, s2, lda, ldb, ldc;
} call;

static int to_enum(int position, enum shape shape, char c) {
  const int rank = shape == RANK_K || shape == RANK_2K;
  if (rank && position == 0) return c == 'U' ? 121 : c == 'L' ? 122 : 99;
  if ((rank && position == 1) || position == 2)
    return c == 'N' ? 111 : c == 'T' ? 112 : c == 'C' ? 113 : 99;
  if (position == 0) return c == 'L' ? 141 : c == 'R' ? 142 : 99;
  if (position == 1) return c == 'U' ? 121 : c == 'L' ? 122 : 99;
  return c == 'N' ? 131 : c == 'U' ? 132 : 99;
}

static int herm(const entry* e) { return e->routine[1] == 'h'; }

/* Calls fn, one of e's definitions, with x's integers in e's width; alpha, beta: (re, im). */
#define TB_INVOKE(INT)                                                                             \
  do {                                                                                             \
    const INT s1 = (INT)x->s1, s2 = (INT)x->s2, lda = (INT)x->lda, ldb = (INT)x->ldb;              \
    const INT ldc = (INT)x->ldc;                                                                   \
    const char* f = x->f;                                                                          \
    if (!e->cblas) {                                                                               \
      switch (e->shape) {                                                                          \
        case RANK_K:                                                                               \
          ((void (*)(const char*, const char*, const INT*, const INT*, const void*, const void*,   \
                     const INT*, const void*, void*, const INT*, size_t, size_t))fn)(              \
              &f[0], &f[1], &s1, &s2, alpha, a, &lda, beta, c, &ldc, 1, 1);                        \
          break;                                                                                   \
        case RANK_2K:                                                                              \
        case SYMM:                                                                                 \
          ((void (*)(const char*, const char*, const INT*, const INT*, const void*, const void*,   \
                     const INT*, const void*, const INT*, const void*, void*, const INT*, size_t,  \
                     size_t))fn)(&f[0], &f[1], &s1, &s2, alpha, a, &lda, b, &ldb, beta, c, &ldc,   \
                                 1, 1);                                                            \
          break;                                                                                   \
        case TRI:                                                                                  \
          ((void (*)(const char*, const char*, const char*, const char*, const INT*, const INT*,   \
                     const void*, const void*, const INT*, void*, const INT*, size_t, size_t,      \
                     size_t, size_t))fn)(&f[0], &f[1], &f[2], &f[3], &s1, &s2, alpha, a, &lda, b,  \
                                         &ldb, 1, 1, 1, 1);                                        \
          break;                                                                                   \
      }                                                                                            \
      break;                                                                                       \
    }                                                                                              \
    const int e0 = to_enum(0, e->shape, f[0]), e1 = to_enum(1, e->shape, f[1]);                    \
    const int e2 = to_enum(2, e->shape, f[2]), e3 = to_enum(3, e->shape, f[3]);                    \
    /* Real scalars by value: every one of a real routine, ZHERK's two, ZHER2K's beta. */          \
    const int alpha_value = !e->cplx || (herm(e) && e->shape == RANK_K);                           \
    const int beta_value = !e->cplx || (herm(e) && e->shape != SYMM);                              \
    switch (e->shape) {                                                                            \
      case RANK_K:                                                                                 \
        if (alpha_value)                                                                           \
          ((void (*)(int, int, int, INT, INT, double, const void*, INT, double, void*, INT))fn)(   \
              x->layout, e0, e1, s1, s2, *alpha, a, lda, *beta, c, ldc);                           \
        else                                                                                       \
          ((void (*)(int, int, int, INT, INT, const void*, const void*, INT, const void*, void*,   \
                     INT))fn)(x->layout, e0, e1, s1, s2, alpha, a, lda, beta, c, ldc);             \
        break;                                                                                     \
      case RANK_2K:                                                                                \
        if (alpha_value)                                                                           \
          ((void (*)(int, int, int, INT, INT, double, const void*, INT, const void*, INT, double,  \
                     void*, INT))fn)(x->layout, e0, e1, s1, s2, *alpha, a, lda, b, ldb, *beta, c,  \
                                     ldc);                                                         \
        else if (beta_value)                                                                       \
          ((void (*)(int, int, int, INT, INT, const void*, const void*, INT, const void*, INT,     \
                     double, void*, INT))fn)(x->layout, e0, e1, s1, s2, alpha, a, lda, b, ldb,     \
                                             *beta, c, ldc);                                       \
        else                                                                                       \
          ((void (*)(int, int, int, INT, INT, const void*, const void*, INT, const void*, INT,     \
                     const void*, void*, INT))fn)(x->layout, e0, e1, s1, s2, alpha, a, lda, b,     \
                                                  ldb, beta, c, ldc);                              \
        break;                                                                                     \
      case SYMM:                                                                                   \
        if (alpha_value)                                                                           \
          ((void (*)(int, int, int, INT, INT, double, const void*, INT, const void*, INT, double,  \
                     void*, INT))fn)(x->layout, e0, e1, s1, s2, *alpha, a, lda, b, ldb, *beta, c,  \
                                     ldc);                                                         \
        else                                                                                       \
          ((void (*)(int, int, int, INT, INT, const void*, const void*, INT, const void*, INT,     \
                     const void*, void*, INT))fn)(x->layout, e0, e1, s1, s2, alpha, a, lda, b,     \
                                                  ldb, beta, c, ldc);                              \
        break;                                                                                     \
      case TRI:                                                                                    \
        if (alpha_value)                                                                           \
          ((void (*)(int, int, int, int, int, INT, INT, double, const void*, INT, void*, INT))fn)( \
              x->layout, e0, e1, e2, e3, s1, s2, *alpha, a, lda, b, ldb);                          \
        else                                                                                       \
          ((void (*)(int, int, int, int, int, INT, INT, const void*, const void*, INT, void*,      \
                     INT))fn)(x->layout, e0, e1, e2, e3, s1, s2, alpha, a, lda, b, ldb);           \
        break;                                                                                     \
    }                                                                                              \
  } while (0)

static void invoke(const entry* e, void (*fn)(void), const call* x, const double* alpha,
                   const void* a, void* b, const double* beta, void* c) {
  if (e->ilp64)
    TB_INVOKE(int64_t);
  else
    TB_INVOKE(int);
}

static void* own_library = NULL;
static int failures = 0;

static void fail(const entry* e, const char* what, const char* detail) {
  fprintf(stderr, "FAIL %s %s: %s\n", e->name, what, detail);
  ++failures;
}

/* Stored extent (leading, outer) of a rows x cols matrix. */
static void extent(int row_major, int64_t rows, int64_t cols, int64_t* lead, int64_t* outer) {
  *lead = row_major ? cols : rows;
  *outer = row_major ? rows : cols;
}

static size_t doubles(int w, int64_t ld, int64_t lead, int64_t outer) {
  return (size_t)w * (outer > 1 ? (size_t)ld * (size_t)outer : (size_t)(lead > 0 ? lead : 1));
}

static double max_abs(const double* x, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) m = fabs(x[i]) > m ? fabs(x[i]) : m;
  return m;
}

/* One valid call: forwarded, the bits and integers of the test library's own call; emulated,
 * within 64 (depth + 2) eps S of it elementwise, S = (|alpha| + |beta| + 1)(depth + 1)
 * max|A| max|B or C| + max|result|: any sound FP64 evaluation (the emulation is within FP64
 * GEMM's error) is far inside, a wrong block, triangle or transpose (errors of order 1) is not.
 * The triangular A is diagonally dominant, so the solves are well conditioned. */
static void valid_case(const entry* e, int emulated, call x, const double* alpha,
                       const double* beta, int64_t pad) {
  const int row = e->cblas && x.layout == kRowMajor, w = e->cplx ? 2 : 1;
  const int rank = e->shape == RANK_K || e->shape == RANK_2K;
  const int64_t ka = rank ? 0 : (x.f[0] == 'L' ? x.s1 : x.s2);
  const int64_t depth = rank ? x.s2 : ka;
  int64_t a_lead, a_outer, b_lead, b_outer, c_lead, c_outer;
  if (rank) {
    const int n = x.f[1] == 'N';
    extent(row, n ? x.s1 : x.s2, n ? x.s2 : x.s1, &a_lead, &a_outer);
    extent(row, n ? x.s1 : x.s2, n ? x.s2 : x.s1, &b_lead, &b_outer);
    extent(row, x.s1, x.s1, &c_lead, &c_outer);
  } else {
    extent(row, ka, ka, &a_lead, &a_outer);
    extent(row, x.s1, x.s2, &b_lead, &b_outer);
    extent(row, x.s1, x.s2, &c_lead, &c_outer);
  }
  if (x.lda == 0) x.lda = a_lead + pad;
  if (x.ldb == 0) x.ldb = e->shape == RANK_K ? 0 : b_lead + pad;
  if (x.ldc == 0) x.ldc = e->shape == TRI ? 0 : c_lead + pad;
  const size_t na = doubles(w, x.lda, a_lead, a_outer);
  const size_t nb = doubles(w, x.ldb, b_lead, b_outer);
  const size_t nc = doubles(w, x.ldc, c_lead, c_outer);
  double* a = random_buffer(na);
  double* b = random_buffer(nb);
  double* c = random_buffer(nc);
  if (e->shape == TRI) /* off-diagonal entries below 1 / ka, diagonal 2 */
    for (int64_t i = 0; i < ka; ++i) {
      for (int64_t j = 0; j < ka; ++j)
        for (int p = 0; p < w; ++p) a[w * (j * x.lda + i) + p] /= (double)ka;
      a[w * (i * x.lda + i)] += 2.0;
    }
  /* The output: C, or B for TRMM and TRSM. */
  double* out = e->shape == TRI ? b : c;
  const size_t n_out = e->shape == TRI ? nb : nc;
  double* own_out = malloc(sizeof(double) * n_out);
  double* before = malloc(sizeof(double) * n_out);
  if (own_out == NULL || before == NULL) abort();
  memcpy(own_out, out, sizeof(double) * n_out);
  memcpy(before, out, sizeof(double) * n_out);
  char what[160];
  snprintf(what, sizeof what, "%s%c%c%c%c s=%lld,%lld ld=%lld,%lld,%lld",
           !e->cblas ? ""
           : row     ? "RowMajor "
                     : "ColMajor ",
           x.f[0], x.f[1], x.f[2], x.f[3], (long long)x.s1, (long long)x.s2, (long long)x.lda,
           (long long)x.ldb, (long long)x.ldc);

  const int failures_before = failures;
  void (*own)(void) = (void (*)(void))dlsym(own_library, e->name);
  test_blas64_reset();
  invoke(e, e->linked, &x, alpha, a, e->shape == TRI ? (void*)out : b, beta, c);
  if (emulated) {
    if (rank ? x.s1 > 1 : (ka > 1)) {
      if (test_blas64_calls(e->fortran) == 0)
        fail(e, what, "no diagonal block on the test library's routine of the family");
    }
  } else {
    int64_t got[6];
    const char* routine = test_blas64_last_call(got);
    const int64_t want[6] = {x.s1, x.s2, 0, x.lda, x.ldb, x.ldc};
    if (routine == NULL || strcmp(routine, e->name) != 0)
      fail(e, what, "the test library's routine of the same name was not called");
    else if (memcmp(got, want, sizeof want) != 0)
      fail(e, what, "the integers arrived changed");
  }
  if (own == NULL) {
    fail(e, what, "not in libozdgemm_test_blas64.so");
  } else {
    double* result = malloc(sizeof(double) * n_out);
    if (result == NULL) abort();
    memcpy(result, out, sizeof(double) * n_out);
    double* c_own = e->shape == TRI ? c : own_out;
    double* b_own = e->shape == TRI ? own_out : b;
    invoke(e, own, &x, alpha, a, b_own, beta, c_own);
    if (!emulated) {
      if (memcmp(result, own_out, sizeof(double) * n_out) != 0)
        fail(e, what, "the output differs from the test library's own call");
    } else {
      const double scale_b = e->shape == TRI ? max_abs(before, n_out) : max_abs(b, nb);
      const double s = (fabs(alpha[0]) + fabs(alpha[1]) + fabs(beta[0]) + fabs(beta[1]) + 1) *
                           (double)(depth + 1) * fmax(1, max_abs(a, na)) *
                           fmax(1, fmax(scale_b, max_abs(before, n_out))) +
                       max_abs(own_out, n_out);
      const double tol = 64.0 * (double)(depth + 2) * DBL_EPSILON * s;
      int bad = 0;
      for (size_t i = 0; i < n_out; ++i)
        if (!(fabs(result[i] - own_out[i]) <= tol)) {
          if (bad < 3)
            fprintf(stderr, "  [%zu] = %.17g, want %.17g (bound %g)\n", i, result[i], own_out[i],
                    tol);
          ++bad;
        }
      if (bad != 0) fail(e, what, "output outside the bound");
    }
    free(result);
  }
  if (failures == failures_before) printf("ok   %-22s %s\n", e->name, what);
  free(a);
  free(b);
  free(c);
  free(own_out);
  free(before);
}

/* One invalid call: one report of parameter `info` under the name called, operands untouched. */
static void invalid_case(const entry* e, call x, int64_t info) {
  enum { kLen = 2 * 64 };
  double a[kLen], b[kLen], c[kLen], a0[kLen], b0[kLen], c0[kLen];
  for (int i = 0; i < kLen; ++i) {
    a[i] = a0[i] = next_value();
    b[i] = b0[i] = next_value();
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
           "invalid layout=%d %c%c%c%c s=%lld,%lld ld=%lld,%lld,%lld (want info %lld)", x.layout,
           x.f[0], x.f[1], x.f[2], x.f[3], (long long)x.s1, (long long)x.s2, (long long)x.lda,
           (long long)x.ldb, (long long)x.ldc, (long long)info);
  if (reports != 1 || strcmp(routine, e->name) != 0 || got != info) {
    char detail[96];
    snprintf(detail, sizeof detail, "%d report(s), last '%s' info %lld", reports, routine,
             (long long)got);
    fail(e, what, detail);
  } else if (memcmp(a, a0, sizeof a) != 0 || memcmp(b, b0, sizeof b) != 0 ||
             memcmp(c, c0, sizeof c) != 0) {
    fail(e, what, "an operand was written");
  } else {
    printf("ok   %-22s %s\n", e->name, what);
  }
}

static void run_entry(const entry* e, int emulated) {
  const double alpha[2] = {0.75, -0.5}, beta[2] = {-1.25, 0.5}, zero[2] = {0.0, 0.0};
  const int64_t big = (int64_t)1 << 32;
  const char t = e->cplx ? (herm(e) ? 'C' : 'T') : 'T';
  const int col = kColMajor, row = kRowMajor;
  /* HERK's and HER2K's beta, HERK's alpha are real: their imaginary parts are not passed. */
  const double real_alpha[2] = {alpha[0], 0.0}, real_beta[2] = {beta[0], 0.0};
  const double* al = herm(e) && e->shape == RANK_K ? real_alpha : alpha;
  const double* be = herm(e) && e->shape != SYMM ? real_beta : beta;
  switch (e->shape) {
    case RANK_K:
    case RANK_2K:
      valid_case(e, emulated, (call){col, {'U', 'N'}, 7, 5, 0, 0, 0}, al, be, 2);
      valid_case(e, emulated, (call){col, {'L', t}, 6, 9, 0, 0, 0}, al, zero, 1);
      if (e->cblas) {
        valid_case(e, emulated, (call){row, {'L', 'N'}, 5, 4, 0, 0, 0}, al, be, 3);
        valid_case(e, emulated, (call){row, {'U', t}, 6, 3, 0, 0, 0}, al, be, 0);
      }
      break;
    case SYMM:
      valid_case(e, emulated, (call){col, {'L', 'U'}, 7, 5, 0, 0, 0}, alpha, beta, 2);
      valid_case(e, emulated, (call){col, {'R', 'L'}, 6, 4, 0, 0, 0}, alpha, zero, 1);
      if (e->cblas) valid_case(e, emulated, (call){row, {'L', 'L'}, 5, 6, 0, 0, 0}, alpha, beta, 3);
      break;
    case TRI:
      valid_case(e, emulated, (call){col, {'L', 'U', 'N', 'N'}, 7, 5, 0, 0, 0}, alpha, zero, 2);
      valid_case(e, emulated, (call){col, {'R', 'L', t, 'U'}, 6, 4, 0, 0, 0}, alpha, zero, 1);
      valid_case(e, emulated, (call){col, {'L', 'L', 'T', 'N'}, 5, 3, 0, 0, 0}, alpha, zero, 0);
      if (e->cblas)
        valid_case(e, emulated, (call){row, {'R', 'U', 'N', 'N'}, 5, 6, 0, 0, 0}, alpha, zero, 3);
      break;
  }
  /* A valid set of CHARACTERs, and with it the invalid calls' numbering. */
  const int square = e->shape == TRI || e->shape == SYMM;
  const char f[4] = {square ? 'L' : 'U', square ? 'U' : 'N', 'N', 'N'};
  if (e->ilp64) /* leading dimensions above 2^32 on 1 x 1 operands: valid and never used */
    valid_case(e, emulated,
               (call){col,
                      {f[0], f[1], f[2], f[3]},
                      1,
                      1,
                      big + 7,
                      e->shape == RANK_K ? 0 : big + 9,
                      e->shape == TRI ? 0 : big + 11},
               al, be, 0);

  /* Invalid calls: a bad first CHARACTER (CBLAS: also a bad layout), a negative size, a short
   * leading dimension of the output (3 rows, 2 given); with 64-bit integers, values whose low 32
   * bits are valid. CBLAS numbers the parameters one more. */
  const int c1 = e->cblas;
  const int first_size = e->shape == TRI ? 5 : 3;
  const int64_t out_ld_info = e->shape == TRI ? 11 : e->shape == RANK_K ? 10 : 12;
  const int lay = e->cblas ? col : 0;
  if (e->cblas) invalid_case(e, (call){99, {f[0], f[1], f[2], f[3]}, 2, 2, 2, 2, 2}, 1);
  invalid_case(e, (call){lay, {'X', f[1], f[2], f[3]}, 2, 2, 2, 2, 2}, 1 + c1);
  invalid_case(e, (call){lay, {f[0], f[1], f[2], f[3]}, -1, 2, 2, 2, 2}, first_size + c1);
  invalid_case(
      e,
      (call){
          lay, {f[0], f[1], f[2], f[3]}, 3, 2, 3, e->shape == TRI ? 2 : 3, e->shape == TRI ? 0 : 2},
      out_ld_info + c1);
  if (e->ilp64) {
    invalid_case(e, (call){lay, {f[0], f[1], f[2], f[3]}, -big + 2, 2, 2, 2, 2}, first_size + c1);
    invalid_case(e, (call){lay, {f[0], f[1], f[2], f[3]}, 2, 2, -big + 5, 2, 2},
                 first_size + 4 + c1);
  }
}

int main(int argc, char** argv) {
  int emulated = 0;
  const int status = test_blas64_client_start(argc, argv, &emulated, &own_library);
  if (status != 0) return status;
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; ++i) run_entry(&entries[i], emulated);
  printf("Level-3 ILP64 and scipy-openblas names (%s): %d failures\n", argv[1], failures);
  return failures != 0;
}
