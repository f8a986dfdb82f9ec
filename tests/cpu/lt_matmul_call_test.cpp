// Reading a cublasLtMatmul call as a GEMM (src/interpose/lt_matmul_call.hpp) from descriptors
// made by the real cuBLASLt (its descriptor functions need no GPU): every op pair, real and
// complex, strided batches, and each thing that makes a call one the library does not serve.
#include "interpose/lt_matmul_call.hpp"

#include <cublasLt.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

namespace ozdgemm::test {
namespace {

using detail::lt_gemm;

const detail::lt_getters kGetters{&cublasLtMatmulDescGetAttribute,
                                  &cublasLtMatrixLayoutGetAttribute};

// One call's descriptors: op(A) m x k, op(B) k x n, C and D m x n, leading dimensions padded.
struct lt_call {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;

  lt_call(cudaDataType type, cublasOperation_t ta, cublasOperation_t tb, uint64_t m, uint64_t n,
          uint64_t k, int32_t batch = 1) {
    EXPECT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_64F, type), CUBLAS_STATUS_SUCCESS);
    set(CUBLASLT_MATMUL_DESC_TRANSA, int32_t{ta});
    set(CUBLASLT_MATMUL_DESC_TRANSB, int32_t{tb});
    const uint64_t ar = ta == CUBLAS_OP_N ? m : k, ac = ta == CUBLAS_OP_N ? k : m;
    const uint64_t br = tb == CUBLAS_OP_N ? k : n, bc = tb == CUBLAS_OP_N ? n : k;
    a = layout(type, ar, ac, ar + 3, batch);
    b = layout(type, br, bc, br + 1, batch);
    c = layout(type, m, n, m + 2, batch);
    d = layout(type, m, n, m + 2, batch);
  }
  ~lt_call() {
    cublasLtMatmulDescDestroy(desc);
    for (cublasLtMatrixLayout_t l : {a, b, c, d}) cublasLtMatrixLayoutDestroy(l);
  }
  lt_call(const lt_call&) = delete;
  lt_call& operator=(const lt_call&) = delete;

  template <class V>
  void set(cublasLtMatmulDescAttributes_t attr, V v) {
    ASSERT_EQ(cublasLtMatmulDescSetAttribute(desc, attr, &v, sizeof v), CUBLAS_STATUS_SUCCESS);
  }
  template <class V>
  static void set(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, V v) {
    ASSERT_EQ(cublasLtMatrixLayoutSetAttribute(l, attr, &v, sizeof v), CUBLAS_STATUS_SUCCESS);
  }
  static cublasLtMatrixLayout_t layout(cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld,
                                       int32_t batch) {
    cublasLtMatrixLayout_t l = nullptr;
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld), CUBLAS_STATUS_SUCCESS);
    if (batch > 1) {
      set(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, batch);
      set(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, static_cast<int64_t>(ld * cols + 5));
    }
    return l;
  }
  const char* read(bool* fp64, lt_gemm* g) const {
    return detail::read_lt_matmul(kGetters, desc, a, b, c, d, fp64, g);
  }
};

TEST(LtMatmulCall, EveryOpPairRealAndComplex) {
  for (cudaDataType type : {CUDA_R_64F, CUDA_C_64F})
    for (cublasOperation_t ta : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C})
      for (cublasOperation_t tb : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}) {
        SCOPED_TRACE(testing::Message() << "type " << type << " ops " << ta << tb);
        const lt_call call(type, ta, tb, 70, 50, 30);
        bool fp64 = false;
        lt_gemm g;
        ASSERT_EQ(call.read(&fp64, &g), nullptr);
        EXPECT_TRUE(fp64);
        EXPECT_EQ(g.complex, type == CUDA_C_64F);
        EXPECT_EQ(g.ta, ta);
        EXPECT_EQ(g.tb, tb);
        EXPECT_EQ(g.m, 70);
        EXPECT_EQ(g.n, 50);
        EXPECT_EQ(g.k, 30);
        EXPECT_EQ(g.a.ld, (ta == CUBLAS_OP_N ? 70 : 30) + 3);
        EXPECT_EQ(g.b.ld, (tb == CUBLAS_OP_N ? 30 : 50) + 1);
        EXPECT_EQ(g.c.ld, 72);
        EXPECT_EQ(g.d.ld, 72);
        EXPECT_EQ(g.batch, 1);
      }
}

TEST(LtMatmulCall, StridedBatches) {
  const lt_call call(CUDA_R_64F, CUBLAS_OP_T, CUBLAS_OP_N, 16, 8, 12, 5);
  bool fp64 = false;
  lt_gemm g;
  ASSERT_EQ(call.read(&fp64, &g), nullptr);
  EXPECT_EQ(g.batch, 5);
  EXPECT_EQ(g.a.stride, (12 + 3) * 16 + 5);  // A is k x m
  EXPECT_EQ(g.b.stride, (12 + 1) * 8 + 5);
  EXPECT_EQ(g.d.stride, 18 * 8 + 5);
}

// Each change makes the call one the library forwards, with its reason.
TEST(LtMatmulCall, WhatIsNotServed) {
  struct change {
    const char* why;
    std::function<void(lt_call&)> apply;
  };
  const change changes[] = {
      {"scalars not in host memory",
       [](lt_call& x) {
         x.set(CUBLASLT_MATMUL_DESC_POINTER_MODE, int32_t{CUBLASLT_POINTER_MODE_DEVICE});
       }},
      {"epilogue",
       [](lt_call& x) { x.set(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{CUBLASLT_EPILOGUE_RELU}); }},
      {"transformed or triangular C",
       [](lt_call& x) { x.set(CUBLASLT_MATMUL_DESC_FILL_MODE, int32_t{CUBLAS_FILL_MODE_LOWER}); }},
      {"matrix order other than column-major",
       [](lt_call& x) {
         lt_call::set(x.a, CUBLASLT_MATRIX_LAYOUT_ORDER, int32_t{CUBLASLT_ORDER_ROW});
       }},
      {"matrices of mixed types",
       [](lt_call& x) { lt_call::set(x.c, CUBLASLT_MATRIX_LAYOUT_TYPE, uint32_t{CUDA_R_32F}); }},
      {"matrix shapes that do not form a GEMM",
       [](lt_call& x) { lt_call::set(x.b, CUBLASLT_MATRIX_LAYOUT_ROWS, uint64_t{31}); }},
      {"batch counts that differ",
       [](lt_call& x) { lt_call::set(x.d, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t{2}); }},
      {"invalid matrix layout",
       [](lt_call& x) { lt_call::set(x.d, CUBLASLT_MATRIX_LAYOUT_LD, int64_t{69}); }},
      {"scale type other than FP64",
       [](lt_call& x) { x.set(CUBLASLT_MATMUL_DESC_SCALE_TYPE, int32_t{CUDA_R_32F}); }},
  };
  for (const change& ch : changes) {
    SCOPED_TRACE(ch.why);
    lt_call call(CUDA_R_64F, CUBLAS_OP_N, CUBLAS_OP_N, 70, 50, 30);
    ch.apply(call);
    bool fp64 = false;
    lt_gemm g;
    const char* why = call.read(&fp64, &g);
    EXPECT_TRUE(fp64);
    ASSERT_NE(why, nullptr);
    EXPECT_EQ(std::string(why), ch.why);
  }
}

// Other compute types, FP64 pedantic among them, are not the library's: forwarded, not logged.
TEST(LtMatmulCall, OtherComputeTypesAreNotFp64) {
  for (cublasComputeType_t compute : {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_64F_PEDANTIC}) {
    cublasLtMatmulDesc_t desc = nullptr;
    ASSERT_EQ(cublasLtMatmulDescCreate(&desc, compute,
                                       compute == CUBLAS_COMPUTE_32F ? CUDA_R_32F : CUDA_R_64F),
              CUBLAS_STATUS_SUCCESS);
    const lt_call shapes(CUDA_R_64F, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8);
    bool fp64 = true;
    lt_gemm g;
    EXPECT_STREQ(
        detail::read_lt_matmul(kGetters, desc, shapes.a, shapes.b, shapes.c, shapes.d, &fp64, &g),
        "not FP64");
    EXPECT_FALSE(fp64);
    cublasLtMatmulDescDestroy(desc);
  }
  bool fp64 = true;
  lt_gemm g;
  EXPECT_STREQ(
      detail::read_lt_matmul(kGetters, nullptr, nullptr, nullptr, nullptr, nullptr, &fp64, &g),
      "unreadable matmul descriptor");
  EXPECT_FALSE(fp64);
}

}  // namespace
}  // namespace ozdgemm::test
