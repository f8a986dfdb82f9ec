// common/env.hpp: the one reader of OZDGEMM_* settings. The setgid case (where it must return
// null) runs as a real setgid program in tests/security/security_test.sh.
#include <gtest/gtest.h>
#include <sys/auxv.h>

#include <cstdlib>
#include <string>

#include "common/env.hpp"

namespace ozdgemm::test {
namespace {

TEST(SettingEnv, ReturnsSetValuesAndNullForUnsetOrEmpty) {
  const char* name = "OZDGEMM_TEST_SETTING_ENV";
  ASSERT_EQ(::unsetenv(name), 0);
  EXPECT_EQ(detail::setting_env(name), nullptr);
  ASSERT_EQ(::setenv(name, "", 1), 0);
  EXPECT_EQ(detail::setting_env(name), nullptr);
  ASSERT_EQ(::setenv(name, "value", 1), 0);
  ASSERT_NE(detail::setting_env(name), nullptr);
  EXPECT_EQ(std::string(detail::setting_env(name)), "value");
  ::unsetenv(name);
}

TEST(SettingEnv, SecureExecutionFollowsAtSecure) {
  // The test binary is not setuid/setgid: the kernel's AT_SECURE is 0 and so is ours.
  EXPECT_EQ(detail::secure_execution(), getauxval(AT_SECURE) != 0);
  EXPECT_FALSE(detail::secure_execution());
}

}  // namespace
}  // namespace ozdgemm::test
