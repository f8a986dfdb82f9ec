/* The cuBLAS hooks in a plain cuBLAS program, with or without a GPU (runs in CI). libozdgemm.so
 * does not link cuBLAS (it loads it on first use), so its hooks must find the program's own
 * copy. Every intercepted entry point (cublasDgemm_v2, cublasDgemm_v2_64, cublasGemmEx,
 * cublasGemmEx_64, the pointer-array batches cublasDgemmBatched and cublasGemmBatchedEx, the
 * grouped batches cublasDgemmGroupedBatched and cublasGemmGroupedBatchedEx, cublasDestroy_v2)
 * is called on a null handle (valid and invalid sizes) and
 * must return exactly the status of the real routine, found with dlsym in libcublas.so.13
 * itself; cublasCreate is not intercepted and must fail or succeed as the machine allows.
 * Prints one line per call and exits 0 when every status matches. */
#include <cublas_v2.h>
#include <dlfcn.h>
#include <stdio.h>

typedef cublasStatus_t (*dgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                   int, int, const double*, const double*, int, const double*,
                                   int, const double*, double*, int);
typedef cublasStatus_t (*dgemm64_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                     int64_t, int64_t, int64_t, const double*, const double*,
                                     int64_t, const double*, int64_t, const double*, double*,
                                     int64_t);
typedef cublasStatus_t (*gemm_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                     int, int, const void*, const void*, cudaDataType, int,
                                     const void*, cudaDataType, int, const void*, void*,
                                     cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*gemm_ex64_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                       int64_t, int64_t, int64_t, const void*, const void*,
                                       cudaDataType, int64_t, const void*, cudaDataType, int64_t,
                                       const void*, void*, cudaDataType, int64_t,
                                       cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*destroy_fn)(cublasHandle_t);
typedef cublasStatus_t (*batched_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                     int, int, const double*, const double* const*, int,
                                     const double* const*, int, const double*, double* const*,
                                     int, int);
typedef cublasStatus_t (*batched_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                        int, int, int, const void*, const void* const*,
                                        cudaDataType, int, const void* const*, cudaDataType, int,
                                        const void*, void* const*, cudaDataType, int, int,
                                        cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*grouped_fn)(cublasHandle_t, const cublasOperation_t*,
                                     const cublasOperation_t*, const int*, const int*, const int*,
                                     const double*, const double* const*, const int*,
                                     const double* const*, const int*, const double*,
                                     double* const*, const int*, int, const int*);
typedef cublasStatus_t (*grouped_ex_fn)(cublasHandle_t, const cublasOperation_t*,
                                        const cublasOperation_t*, const int*, const int*,
                                        const int*, const void*, const void* const*, cudaDataType,
                                        const int*, const void* const*, cudaDataType, const int*,
                                        const void*, void* const*, cudaDataType, const int*, int,
                                        const int*, cublasComputeType_t);

static int failures = 0;

static void compare(const char* what, cublasStatus_t got, cublasStatus_t want) {
  printf("%-34s %-30s (real: %s)\n", what, cublasGetStatusString(got),
         cublasGetStatusString(want));
  if (got != want) {
    fprintf(stderr, "FAIL: %s returned %d, the real routine %d\n", what, (int)got, (int)want);
    ++failures;
  }
}

int main(void) {
  /* The program links libcublas, so this only looks it up; dlsym in it finds its own
   * definitions, not the preloaded library's. */
  void* lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (lib == NULL) {
    fprintf(stderr, "FAIL: libcublas.so.13 is not loaded: %s\n", dlerror());
    return 1;
  }
  dgemm_fn real_dgemm = (dgemm_fn)dlsym(lib, "cublasDgemm_v2");
  dgemm64_fn real_dgemm64 = (dgemm64_fn)dlsym(lib, "cublasDgemm_v2_64");
  gemm_ex_fn real_gemm_ex = (gemm_ex_fn)dlsym(lib, "cublasGemmEx");
  gemm_ex64_fn real_gemm_ex64 = (gemm_ex64_fn)dlsym(lib, "cublasGemmEx_64");
  destroy_fn real_destroy = (destroy_fn)dlsym(lib, "cublasDestroy_v2");
  grouped_fn real_grouped = (grouped_fn)dlsym(lib, "cublasDgemmGroupedBatched");
  grouped_ex_fn real_grouped_ex = (grouped_ex_fn)dlsym(lib, "cublasGemmGroupedBatchedEx");
  batched_fn real_batched = (batched_fn)dlsym(lib, "cublasDgemmBatched");
  batched_ex_fn real_batched_ex = (batched_ex_fn)dlsym(lib, "cublasGemmBatchedEx");
  if (!real_dgemm || !real_dgemm64 || !real_gemm_ex || !real_gemm_ex64 || !real_destroy ||
      !real_grouped || !real_grouped_ex || !real_batched || !real_batched_ex) {
    fprintf(stderr, "FAIL: a cuBLAS entry point is missing from libcublas.so.13\n");
    return 1;
  }

  cublasHandle_t h = NULL;
  const cublasStatus_t created = cublasCreate(&h);
  printf("cublasCreate: %s\n", cublasGetStatusString(created));
  if (created == CUBLAS_STATUS_SUCCESS) compare("cublasDestroy (created handle)", cublasDestroy(h),
                                                CUBLAS_STATUS_SUCCESS);

  /* Host pointers: with a null handle nothing is read or written. */
  double a[16 * 16] = {0}, b[16 * 16] = {0}, c[16 * 16] = {0};
  const double one = 1.0, zero = 0.0;
  const cublasOperation_t n = CUBLAS_OP_N;
  const int rows[2] = {16, -1}; /* valid sizes, then an invalid m */
  for (int r = 0; r < 2; ++r) {
    const int m = rows[r];
    const char* sizes = m > 0 ? "valid sizes" : "m = -1";
    char what[64];
    snprintf(what, sizeof what, "cublasDgemm_v2, %s", sizes);
    compare(what, cublasDgemm(NULL, n, n, m, 16, 16, &one, a, 16, b, 16, &zero, c, 16),
            real_dgemm(NULL, n, n, m, 16, 16, &one, a, 16, b, 16, &zero, c, 16));
    snprintf(what, sizeof what, "cublasDgemm_v2_64, %s", sizes);
    compare(what, cublasDgemm_64(NULL, n, n, m, 16, 16, &one, a, 16, b, 16, &zero, c, 16),
            real_dgemm64(NULL, n, n, m, 16, 16, &one, a, 16, b, 16, &zero, c, 16));
    snprintf(what, sizeof what, "cublasGemmEx, %s", sizes);
    compare(what,
            cublasGemmEx(NULL, n, n, m, 16, 16, &one, a, CUDA_R_64F, 16, b, CUDA_R_64F, 16, &zero,
                         c, CUDA_R_64F, 16, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT),
            real_gemm_ex(NULL, n, n, m, 16, 16, &one, a, CUDA_R_64F, 16, b, CUDA_R_64F, 16, &zero,
                         c, CUDA_R_64F, 16, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
    snprintf(what, sizeof what, "cublasGemmEx_64, %s", sizes);
    compare(what,
            cublasGemmEx_64(NULL, n, n, m, 16, 16, &one, a, CUDA_R_64F, 16, b, CUDA_R_64F, 16,
                            &zero, c, CUDA_R_64F, 16, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT),
            real_gemm_ex64(NULL, n, n, m, 16, 16, &one, a, CUDA_R_64F, 16, b, CUDA_R_64F, 16,
                           &zero, c, CUDA_R_64F, 16, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
    /* Two matrices, as one pointer-array batch and as one group (the arrays in host memory:
     * nothing reads them here). */
    const int gm[1] = {m}, g16[1] = {16}, gsize[1] = {2};
    const cublasOperation_t gop[1] = {n};
    const double galpha[1] = {1.0}, gbeta[1] = {0.0};
    const double* const ga[2] = {a, a};
    const double* const gb[2] = {b, b};
    double* const gc[2] = {c, c};
    snprintf(what, sizeof what, "cublasDgemmBatched, %s", sizes);
    compare(what, cublasDgemmBatched(NULL, n, n, m, 16, 16, &one, ga, 16, gb, 16, &zero, gc, 16, 2),
            real_batched(NULL, n, n, m, 16, 16, &one, ga, 16, gb, 16, &zero, gc, 16, 2));
    snprintf(what, sizeof what, "cublasGemmBatchedEx, %s", sizes);
    compare(what,
            cublasGemmBatchedEx(NULL, n, n, m, 16, 16, &one, (const void* const*)ga, CUDA_R_64F,
                                16, (const void* const*)gb, CUDA_R_64F, 16, &zero,
                                (void* const*)gc, CUDA_R_64F, 16, 2, CUBLAS_COMPUTE_64F,
                                CUBLAS_GEMM_DEFAULT),
            real_batched_ex(NULL, n, n, m, 16, 16, &one, (const void* const*)ga, CUDA_R_64F, 16,
                            (const void* const*)gb, CUDA_R_64F, 16, &zero, (void* const*)gc,
                            CUDA_R_64F, 16, 2, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
    snprintf(what, sizeof what, "cublasDgemmGroupedBatched, %s", sizes);
    compare(what,
            cublasDgemmGroupedBatched(NULL, gop, gop, gm, g16, g16, galpha, ga, g16, gb, g16,
                                      gbeta, gc, g16, 1, gsize),
            real_grouped(NULL, gop, gop, gm, g16, g16, galpha, ga, g16, gb, g16, gbeta, gc, g16, 1,
                         gsize));
    snprintf(what, sizeof what, "cublasGemmGroupedBatchedEx, %s", sizes);
    compare(what,
            cublasGemmGroupedBatchedEx(NULL, gop, gop, gm, g16, g16, galpha,
                                       (const void* const*)ga, CUDA_R_64F, g16,
                                       (const void* const*)gb, CUDA_R_64F, g16, gbeta,
                                       (void* const*)gc, CUDA_R_64F, g16, 1, gsize,
                                       CUBLAS_COMPUTE_64F),
            real_grouped_ex(NULL, gop, gop, gm, g16, g16, galpha, (const void* const*)ga,
                            CUDA_R_64F, g16, (const void* const*)gb, CUDA_R_64F, g16, gbeta,
                            (void* const*)gc, CUDA_R_64F, g16, 1, gsize, CUBLAS_COMPUTE_64F));
  }
  compare("cublasDestroy_v2, null handle", cublasDestroy(NULL), real_destroy(NULL));
  for (int i = 0; i < 16 * 16; ++i)
    if (c[i] != 0.0) {
      fprintf(stderr, "FAIL: C was written through a null handle\n");
      return 1;
    }
  printf("%s\n", failures ? "statuses differ" : "every status matches the real cuBLAS");
  return failures != 0;
}
