/* Symbol visibility: the library is built with hidden visibility, and only the public API
 * (and, later, the intercepted BLAS/cuBLAS symbols) carry OZDGEMM_API. */
#ifndef OZDGEMM_EXPORT_H
#define OZDGEMM_EXPORT_H
#define OZDGEMM_API __attribute__((visibility("default")))
#endif
