// One cublasLtMatmul call read as the cuBLAS GEMM it is, or why it is not one the library
// serves. cuBLASLt keeps a call's arguments in opaque descriptors; this reads them through
// cuBLASLt's own getters (passed in, so that the CPU tests use the real cuBLASLt without a GPU).
// Attribute types: cublasLt.h, CUDA 13.0.
#pragma once

#include <cublasLt.h>

#include <algorithm>
#include <cstdint>

namespace ozdgemm::detail {

struct lt_getters {
  decltype(&cublasLtMatmulDescGetAttribute) desc;
  decltype(&cublasLtMatrixLayoutGetAttribute) layout;
};

// One matrix layout as a column-major strided batch.
struct lt_layout {
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch = 1;
  int64_t stride = 0;  // elements between batch matrices
};

// D_i = alpha op(A_i) op(B_i) + beta C_i, i < batch, all FP64 (complex: interleaved
// cuDoubleComplex); alpha and beta in host memory, of the element type.
struct lt_gemm {
  bool complex = false;
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  int64_t m = 0, n = 0, k = 0;
  int32_t batch = 1;
  lt_layout a, b, c, d;
};

namespace lt_detail {

template <class V>
bool get(const lt_getters& g, cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
         V* v) {
  size_t written = 0;
  return g.desc(desc, attr, v, sizeof *v, &written) == CUBLAS_STATUS_SUCCESS &&
         written == sizeof *v;
}
template <class V>
bool get(const lt_getters& g, cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr,
         V* v) {
  size_t written = 0;
  return g.layout(l, attr, v, sizeof *v, &written) == CUBLAS_STATUS_SUCCESS && written == sizeof *v;
}

// A layout of `type`, column-major, strided batches, interleaved complex; else its reason.
inline const char* read_layout(const lt_getters& g, cublasLtMatrixLayout_t l, uint32_t type,
                               lt_layout* out) {
  uint32_t t = 0;
  int32_t order = 0, mode = 0;
  int64_t plane = 0;
  if (l == nullptr || !get(g, l, CUBLASLT_MATRIX_LAYOUT_TYPE, &t) ||
      !get(g, l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order) ||
      !get(g, l, CUBLASLT_MATRIX_LAYOUT_ROWS, &out->rows) ||
      !get(g, l, CUBLASLT_MATRIX_LAYOUT_COLS, &out->cols) ||
      !get(g, l, CUBLASLT_MATRIX_LAYOUT_LD, &out->ld) ||
      !get(g, l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &out->batch) ||
      !get(g, l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &out->stride) ||
      !get(g, l, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, &plane) ||
      !get(g, l, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode))
    return "unreadable matrix layout";
  if (t != type) return "matrices of mixed types";
  if (order != CUBLASLT_ORDER_COL) return "matrix order other than column-major";
  if (plane != 0) return "planar complex layout";
  if (mode != 0) return "pointer-array batch";
  if (out->rows > static_cast<uint64_t>(INT32_MAX) ||
      out->cols > static_cast<uint64_t>(INT32_MAX) ||
      out->ld < std::max<int64_t>(1, static_cast<int64_t>(out->rows)) || out->stride < 0)
    return "invalid matrix layout";  // cuBLASLt's to report
  return nullptr;
}

}  // namespace lt_detail

// Null with *out filled when the call is a plain FP64 GEMM the library serves: compute type
// CUBLAS_COMPUTE_64F, every matrix and the scale type CUDA_R_64F (or every one CUDA_C_64F),
// scalars in host memory, C and D full (no TRANSC, no fill mode), the default epilogue, no
// emulation descriptor, column-major interleaved layouts of the GEMM's shapes with one batch
// count. Otherwise the reason (static). *fp64 tells whether the compute type is 64F at all (a
// call that is not is forwarded without a decision line, as cublasGemmEx's other types).
inline const char* read_lt_matmul(const lt_getters& g, cublasLtMatmulDesc_t desc,
                                  cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                  cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, bool* fp64,
                                  lt_gemm* out) {
  using lt_detail::get;
  *fp64 = false;
  int32_t compute = 0, scale = 0, pointer_mode = 0, ta = 0, tb = 0, tc = 0, fill = 0;
  uint32_t epilogue = 0;
  cublasLtEmulationDesc_t emulation = nullptr;
  if (desc == nullptr || !get(g, desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute))
    return "unreadable matmul descriptor";
  if (compute != CUBLAS_COMPUTE_64F) return "not FP64";
  *fp64 = true;
  if (!get(g, desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale) ||
      !get(g, desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pointer_mode) ||
      !get(g, desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta) ||
      !get(g, desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb) ||
      !get(g, desc, CUBLASLT_MATMUL_DESC_TRANSC, &tc) ||
      !get(g, desc, CUBLASLT_MATMUL_DESC_FILL_MODE, &fill) ||
      !get(g, desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue) ||
      !get(g, desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, &emulation))
    return "unreadable matmul descriptor";
  if (scale != CUDA_R_64F && scale != CUDA_C_64F) return "scale type other than FP64";
  if (pointer_mode != CUBLASLT_POINTER_MODE_HOST) return "scalars not in host memory";
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) return "epilogue";
  if (emulation != nullptr) return "cuBLASLt emulation descriptor set";
  if (tc != CUBLAS_OP_N || fill != CUBLAS_FILL_MODE_FULL) return "transformed or triangular C";
  const auto op = [](int32_t t, cublasOperation_t* o) {
    if (t != CUBLAS_OP_N && t != CUBLAS_OP_T && t != CUBLAS_OP_C) return false;
    *o = static_cast<cublasOperation_t>(t);
    return true;
  };
  if (!op(ta, &out->ta) || !op(tb, &out->tb)) return "invalid operation";
  out->complex = scale == CUDA_C_64F;
  const uint32_t type = static_cast<uint32_t>(scale);
  for (const auto& [layout, into] :
       {std::pair{a, &out->a}, std::pair{b, &out->b}, std::pair{c, &out->c}, std::pair{d, &out->d}})
    if (const char* why = lt_detail::read_layout(g, layout, type, into)) return why;
  // op(A) is m x k, op(B) k x n, C and D m x n.
  const bool ra = out->ta == CUBLAS_OP_N, rb = out->tb == CUBLAS_OP_N;
  out->m = static_cast<int64_t>(out->d.rows);
  out->n = static_cast<int64_t>(out->d.cols);
  out->k = static_cast<int64_t>(ra ? out->a.cols : out->a.rows);
  if ((ra ? out->a.rows : out->a.cols) != out->d.rows ||
      (rb ? out->b.rows : out->b.cols) != static_cast<uint64_t>(out->k) ||
      (rb ? out->b.cols : out->b.rows) != out->d.cols || out->c.rows != out->d.rows ||
      out->c.cols != out->d.cols)
    return "matrix shapes that do not form a GEMM";
  out->batch = out->d.batch;
  if (out->a.batch != out->batch || out->b.batch != out->batch || out->c.batch != out->batch ||
      out->batch < 1)
    return "batch counts that differ";
  return nullptr;
}

}  // namespace ozdgemm::detail
