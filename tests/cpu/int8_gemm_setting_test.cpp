// OZDGEMM_INT8_GEMM (engine/int8_gemm.hpp): its parsing, the one warning for an invalid
// value, the process-wide override the benchmark uses, and the lt backend's share of the
// workspace (counted in the engine's workspace, so the caps see it). The GPU side, bit
// identity of the two backends, is tests/gpu/int8_gemm_backend_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/env.hpp"
#include "common/logging.hpp"
#include "engine/emulate.hpp"
#include "engine/int8_gemm.hpp"
#include "log_capture.hpp"

namespace ozdgemm::test {
namespace {

using detail::int8_gemm_backend;

// Restores the environment's backend however a test ends.
struct setting_scope {
  ~setting_scope() { detail::set_int8_gemm_setting(int8_gemm_backend::setting); }
};

TEST(Int8GemmSetting, ParsesExactlyCublasAndLt) {
  int8_gemm_backend b = int8_gemm_backend::setting;
  ASSERT_TRUE(detail::parse_int8_gemm_backend("cublas", &b));
  EXPECT_EQ(b, int8_gemm_backend::cublas);
  ASSERT_TRUE(detail::parse_int8_gemm_backend("lt", &b));
  EXPECT_EQ(b, int8_gemm_backend::lt);
  for (const char* bad : {"", "LT", "Lt", "cuBLAS", "lt ", " lt", "cublaslt", "setting", "auto",
                          "0", "1"}) {
    b = int8_gemm_backend::setting;
    EXPECT_FALSE(detail::parse_int8_gemm_backend(bad, &b)) << "'" << bad << "'";
    EXPECT_EQ(b, int8_gemm_backend::setting) << "a refused value must leave the output alone";
  }
  EXPECT_FALSE(detail::parse_int8_gemm_backend(nullptr, &b));
  EXPECT_STREQ(detail::to_string(int8_gemm_backend::cublas), "cublas");
  EXPECT_STREQ(detail::to_string(int8_gemm_backend::lt), "lt");
}

TEST(Int8GemmSetting, EnvValueDefaultsToLtWithOneWarningForInvalidValues) {
  if (!detail::logger().should_log(spdlog::level::warn))
    GTEST_SKIP() << "OZDGEMM_LOG_LEVEL hides warnings in this run";
  log_capture log;
  EXPECT_EQ(detail::int8_gemm_from_env_value(nullptr), int8_gemm_backend::lt);
  EXPECT_EQ(detail::int8_gemm_from_env_value("cublas"), int8_gemm_backend::cublas);
  EXPECT_EQ(detail::int8_gemm_from_env_value("lt"), int8_gemm_backend::lt);
  EXPECT_EQ(log.count("OZDGEMM_INT8_GEMM"), 0) << "valid values are not warned about";
  EXPECT_EQ(detail::int8_gemm_from_env_value("fastest"), int8_gemm_backend::lt);
  EXPECT_EQ(log.count("OZDGEMM_INT8_GEMM='fastest'"), 1);
  EXPECT_EQ(log.count("using lt"), 1);
}

TEST(Int8GemmSetting, OverrideWinsUntilReset) {
  setting_scope restore;
  const int8_gemm_backend env =
      detail::int8_gemm_from_env_value(detail::setting_env("OZDGEMM_INT8_GEMM"));
  EXPECT_EQ(detail::int8_gemm_setting(), env);
  detail::set_int8_gemm_setting(int8_gemm_backend::lt);
  EXPECT_EQ(detail::int8_gemm_setting(), int8_gemm_backend::lt);
  EXPECT_EQ(detail::resolve_int8_gemm(int8_gemm_backend::setting), int8_gemm_backend::lt);
  EXPECT_EQ(detail::resolve_int8_gemm(int8_gemm_backend::cublas), int8_gemm_backend::cublas);
  detail::set_int8_gemm_setting(int8_gemm_backend::cublas);
  EXPECT_EQ(detail::resolve_int8_gemm(int8_gemm_backend::setting), int8_gemm_backend::cublas);
  EXPECT_EQ(detail::resolve_int8_gemm(int8_gemm_backend::lt), int8_gemm_backend::lt);
  detail::set_int8_gemm_setting(int8_gemm_backend::setting);
  EXPECT_EQ(detail::int8_gemm_setting(), env);
}

// The lt workspace: one INT32 product plane (4 m_pad n_pad bytes), at most 64 MiB.
TEST(Int8GemmSetting, LtWorkspaceIsOneProductPlaneUpTo64MiB) {
  constexpr size_t MiB = size_t{1} << 20;
  for (int64_t m : {int64_t{16}, int64_t{2048}, int64_t{4096}, int64_t{1} << 40})
    EXPECT_EQ(detail::int8_gemm_workspace_bytes(int8_gemm_backend::cublas, m, m), 0u);
  const auto lt = [](int64_t m, int64_t n) {
    return detail::int8_gemm_workspace_bytes(int8_gemm_backend::lt, m, n);
  };
  EXPECT_EQ(lt(16, 16), size_t{4} * 16 * 16);
  EXPECT_EQ(lt(1024, 1024), 4 * MiB);
  EXPECT_EQ(lt(1024, 16), size_t{4} * 1024 * 16);
  EXPECT_EQ(lt(2048, 2048), 16 * MiB);
  EXPECT_EQ(lt(2048, 1040), size_t{4} * 2048 * 1040);
  EXPECT_EQ(lt(4096, 4096), 64 * MiB);
  EXPECT_EQ(lt(16384, 16), size_t{4} * 16384 * 16);
  EXPECT_EQ(lt(int64_t{1} << 40, int64_t{1} << 40), 64 * MiB) << "no overflow";
  for (int64_t m = 16; m <= 8192; m += 16 * 37) EXPECT_EQ(lt(m, m + 16) % 256, 0u);
}

// The lt backend's workspace is part of the call's workspace (OZDGEMM_MAX_WORKSPACE and the
// 90%-of-free rule see it): exactly the cublas layout, rounded to 256 bytes, plus the lt
// share; the cublas layout does not change; `setting` sizes for the process-wide backend.
TEST(Int8GemmSetting, EmulationWorkspaceCountsTheLtWorkspace) {
  setting_scope restore;
  using detail::scaling_mode;
  struct dims {
    int64_t m, n, k;
    detail::moduli_setting s;
  };
  for (scaling_mode mode : {scaling_mode::fast, scaling_mode::accurate})
    for (const dims& d : {dims{300, 200, 500, detail::moduli_setting::fixed(14)},
                          dims{5, 3, 131056 + 77, detail::moduli_setting::fixed(16)},
                          dims{4096, 4096, 4096, detail::moduli_setting::fixed(14)},
                          dims{100, 100, 100, detail::moduli_setting::automatic()}}) {
      const size_t cublas = detail::emulation_workspace_bytes(d.m, d.n, d.k, d.s, mode,
                                                              int8_gemm_backend::cublas);
      const size_t lt =
          detail::emulation_workspace_bytes(d.m, d.n, d.k, d.s, mode, int8_gemm_backend::lt);
      const int64_t m_pad = (d.m + 15) / 16 * 16, n_pad = (d.n + 15) / 16 * 16;
      EXPECT_EQ(lt, (cublas + 255) / 256 * 256 +
                        detail::int8_gemm_workspace_bytes(int8_gemm_backend::lt, m_pad, n_pad))
          << d.m << "x" << d.n << "x" << d.k;
      detail::set_int8_gemm_setting(int8_gemm_backend::cublas);
      EXPECT_EQ(detail::emulation_workspace_bytes(d.m, d.n, d.k, d.s, mode), cublas);
      detail::set_int8_gemm_setting(int8_gemm_backend::lt);
      EXPECT_EQ(detail::emulation_workspace_bytes(d.m, d.n, d.k, d.s, mode), lt);
      size_t bytes = 0;
      ASSERT_TRUE(detail::emulation_workspace_bytes(d.m, d.n, d.k, d.s, mode, &bytes));
      EXPECT_EQ(bytes, lt);
      detail::set_int8_gemm_setting(int8_gemm_backend::setting);
    }
  // Sizes that cannot be counted stay refused with the lt share.
  size_t bytes = 0;
  const int64_t huge = int64_t{1} << 62;
  EXPECT_FALSE(detail::emulation_workspace_bytes(huge, huge, 1, detail::moduli_setting::fixed(2),
                                                 scaling_mode::fast, &bytes,
                                                 int8_gemm_backend::lt));
}

}  // namespace
}  // namespace ozdgemm::test
