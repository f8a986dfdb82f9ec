// The engine's overrides, OZDGEMM_GEMM_BATCHING, OZDGEMM_ROW_BLOCK, OZDGEMM_CHOICE and
// OZDGEMM_ZGEMM_FORM (engine/emulate.hpp, engine/gpu_choice.hpp, engine/complex_gemm.hpp): what each value maps to, and the one warning an
// invalid value gets (README, Environment: "An invalid value gets one warning naming the variable
// and the value, then the default"). The engine reads each once per process; these are the
// mappings.
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
  EXPECT_EQ(detail::complex_form_from_env_value(nullptr), complex_form::karatsuba);
  EXPECT_EQ(detail::complex_form_from_env_value("karatsuba"), complex_form::karatsuba);
  EXPECT_EQ(detail::complex_form_from_env_value("four"), complex_form::four);
  EXPECT_EQ(log.count("OZDGEMM_ZGEMM_FORM"), 0) << "valid values are not warned about";
  for (const char* bad : {"", "Four", "4", "3m", "karatsuba "})
    EXPECT_EQ(detail::complex_form_from_env_value(bad), complex_form::karatsuba) << bad;
  // The process-wide setter wins over the environment, and `setting` hands back to it.
  detail::set_complex_form_setting(complex_form::four);
  EXPECT_EQ(detail::complex_form_setting(), complex_form::four);
  detail::set_complex_form_setting(complex_form::setting);
  EXPECT_NE(detail::complex_form_setting(), complex_form::setting);
  if (!warnings_visible()) GTEST_SKIP() << "OZDGEMM_LOG_LEVEL hides warnings in this run";
  EXPECT_EQ(log.count("OZDGEMM_ZGEMM_FORM="), 5);
  EXPECT_EQ(log.count("OZDGEMM_ZGEMM_FORM='3m' is invalid"), 1);
}

TEST(EngineOverrides, ChoiceValues) {
  log_capture log;
  EXPECT_FALSE(detail::gpu_choice_from_env_value(nullptr));
  EXPECT_FALSE(detail::gpu_choice_from_env_value("host"));
  EXPECT_TRUE(detail::gpu_choice_from_env_value("gpu"));
  EXPECT_EQ(log.count("OZDGEMM_CHOICE"), 0) << "valid values are not warned about";
  for (const char* bad : {"", "GPU", "device", "gpu ", "1"})
    EXPECT_FALSE(detail::gpu_choice_from_env_value(bad)) << bad;
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
