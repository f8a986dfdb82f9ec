// The engine's overrides, OZDGEMM_GEMM_BATCHING, OZDGEMM_ROW_BLOCK, OZDGEMM_CHOICE and
// OZDGEMM_ZGEMM_FORM (engine/emulate.hpp, engine/gpu_choice.hpp, engine/complex_gemm.hpp): what
// each value maps to, and the one warning an invalid value gets (README, Environment: "An invalid
// value gets one warning naming the variable and the value, then the default"). The engine reads
// each once per process; these are the mappings.
#include <gtest/gtest.h>

#include <cstdint>

#include "common/logging.hpp"
#include "engine/complex_gemm.hpp"
#include "engine/emulate.hpp"
#include "engine/gpu_choice.hpp"
#include "log_capture.hpp"

namespace ozdgemm::test {
namespace {

using detail::gemm_batching;

bool warnings_visible() { return detail::logger().should_log(spdlog::level::warn); }

TEST(EngineOverrides, GemmBatchingValues) {
  log_capture log;
  EXPECT_EQ(detail::gemm_batching_from_env_value(nullptr), gemm_batching::automatic);
  EXPECT_EQ(detail::gemm_batching_from_env_value("batched"), gemm_batching::batched);
  EXPECT_EQ(detail::gemm_batching_from_env_value("looped"), gemm_batching::looped);
  EXPECT_EQ(log.count("OZDGEMM_GEMM_BATCHING"), 0) << "valid values are not warned about";
  for (const char* bad : {"", "Batched", "loop", "auto", "batched ", "1"})
    EXPECT_EQ(detail::gemm_batching_from_env_value(bad), gemm_batching::automatic) << bad;
  if (!warnings_visible()) GTEST_SKIP() << "OZDGEMM_LOG_LEVEL hides warnings in this run";
  EXPECT_EQ(log.count("OZDGEMM_GEMM_BATCHING="), 6);
  EXPECT_EQ(log.count("OZDGEMM_GEMM_BATCHING='loop' is invalid"), 1);
}

TEST(EngineOverrides, ZgemmFormValues) {
  using detail::complex_form;
  log_capture log;
  EXPECT_EQ(detail::complex_form_from_env_value(nullptr), complex_form::automatic);
  EXPECT_EQ(detail::complex_form_from_env_value("karatsuba"), complex_form::karatsuba);
  EXPECT_EQ(detail::complex_form_from_env_value("four"), complex_form::four);
  EXPECT_EQ(log.count("OZDGEMM_ZGEMM_FORM"), 0) << "valid values are not warned about";
  for (const char* bad : {"", "Four", "4", "3m", "karatsuba "})
    EXPECT_EQ(detail::complex_form_from_env_value(bad), complex_form::automatic) << bad;
  // The process-wide setter wins over the environment, and `setting` hands back to it.
  detail::set_complex_form_setting(complex_form::four);
  EXPECT_EQ(detail::complex_form_setting(), complex_form::four);
  detail::set_complex_form_setting(complex_form::setting);
  EXPECT_NE(detail::complex_form_setting(), complex_form::setting);
  // The rule: fast scaling only; by size unless forced (2^35 multiply-adds per product).
  using detail::scaling_mode;
  using detail::uses_karatsuba;
  for (complex_form f : {complex_form::automatic, complex_form::karatsuba, complex_form::four})
    EXPECT_FALSE(uses_karatsuba(f, scaling_mode::accurate, 8192, 8192, 8192));
  EXPECT_FALSE(uses_karatsuba(complex_form::automatic, scaling_mode::fast, 2048, 2048, 2048));
  EXPECT_TRUE(uses_karatsuba(complex_form::automatic, scaling_mode::fast, 4096, 4096, 4096));
  EXPECT_TRUE(uses_karatsuba(complex_form::automatic, scaling_mode::fast, 2048, 4096, 4096));
  EXPECT_TRUE(uses_karatsuba(complex_form::automatic, scaling_mode::fast, 2033, 4095, 4090))
      << "padded to 2048 x 4096 x 4096: 2^35";
  EXPECT_FALSE(uses_karatsuba(complex_form::automatic, scaling_mode::fast, 2032, 4096, 4096));
  EXPECT_TRUE(uses_karatsuba(complex_form::karatsuba, scaling_mode::fast, 1, 1, 1));
  EXPECT_FALSE(uses_karatsuba(complex_form::four, scaling_mode::fast, 16384, 16384, 16384));
  EXPECT_TRUE(uses_karatsuba(complex_form::automatic, scaling_mode::fast, int64_t{1} << 40,
                             int64_t{1} << 40, int64_t{1} << 40))
      << "no overflow";
  if (!warnings_visible()) GTEST_SKIP() << "OZDGEMM_LOG_LEVEL hides warnings in this run";
  EXPECT_EQ(log.count("OZDGEMM_ZGEMM_FORM="), 5);
  EXPECT_EQ(log.count("OZDGEMM_ZGEMM_FORM='3m' is invalid"), 1);
}

TEST(EngineOverrides, ChoiceValues) {
  log_capture log;
  using detail::eager_choice_from_env_value;
  using detail::eager_choice_kind;
  EXPECT_EQ(eager_choice_from_env_value(nullptr), eager_choice_kind::speculate)
      << "the default: checked on the GPU, no wait";
  EXPECT_EQ(eager_choice_from_env_value("host"), eager_choice_kind::host);
  EXPECT_EQ(eager_choice_from_env_value("gpu"), eager_choice_kind::speculate);
  EXPECT_EQ(log.count("OZDGEMM_CHOICE"), 0) << "valid values are not warned about";
  for (const char* bad : {"", "GPU", "device", "gpu ", "1"})
    EXPECT_EQ(eager_choice_from_env_value(bad), eager_choice_kind::speculate) << bad;
  if (!warnings_visible()) GTEST_SKIP() << "OZDGEMM_LOG_LEVEL hides warnings in this run";
  EXPECT_EQ(log.count("OZDGEMM_CHOICE="), 5);
  EXPECT_EQ(log.count("OZDGEMM_CHOICE='device' is invalid"), 1);
}

TEST(EngineOverrides, RowBlockValues) {
  log_capture log;
  EXPECT_EQ(detail::row_block_from_env_value(nullptr), -1) << "unset: the rule";
  EXPECT_EQ(detail::row_block_from_env_value("off"), 0) << "one block";
  EXPECT_EQ(detail::row_block_from_env_value("1"), 1);
  EXPECT_EQ(detail::row_block_from_env_value("1024"), 1024);
  EXPECT_EQ(detail::row_block_from_env_value("2147483647"), 2147483647);
  EXPECT_EQ(log.count("OZDGEMM_ROW_BLOCK"), 0) << "valid values are not warned about";
  // Not a plain positive decimal below 2^31: the rule, with a warning each.
  const char* bad[] = {"",     "0",   "-64", "+64", " 64",        "64 ",
                       "0x40", "6e3", "Off", "on",  "2147483648", "99999999999999999999999"};
  for (const char* v : bad) EXPECT_EQ(detail::row_block_from_env_value(v), -1) << "'" << v << "'";
  if (!warnings_visible()) GTEST_SKIP() << "OZDGEMM_LOG_LEVEL hides warnings in this run";
  EXPECT_EQ(log.count("OZDGEMM_ROW_BLOCK="), static_cast<int>(sizeof bad / sizeof bad[0]));
  EXPECT_EQ(log.count("OZDGEMM_ROW_BLOCK='-64' is invalid"), 1);
  EXPECT_EQ(log.count("using the rule"), static_cast<int>(sizeof bad / sizeof bad[0]));
}

}  // namespace
}  // namespace ozdgemm::test
