// fp_flags_guard (common/fp_flags.hpp): the caller's exception flags survive the library's host
// work, both those it had raised and those it had not.
#include "common/fp_flags.hpp"

#include <gtest/gtest.h>

#include <cfenv>

namespace ozdgemm::detail {
namespace {

// 0/0 at run time: volatile operand and result, so the division is neither folded nor dropped.
void invalid_operation() {
  volatile double zero = 0.0;
  volatile double quotient = zero / zero;
  (void)quotient;
}

TEST(FpFlagsGuard, FlagsRaisedInsideTheScopeDoNotReachTheCaller) {
  std::feclearexcept(FE_ALL_EXCEPT);
  {
    const fp_flags_guard guard;
    invalid_operation();
    ASSERT_NE(std::fetestexcept(FE_INVALID), 0) << "the operation raised FE_INVALID";
  }
  EXPECT_EQ(std::fetestexcept(FE_ALL_EXCEPT), 0);
}

TEST(FpFlagsGuard, TheCallersOwnFlagsStayRaised) {
  std::feclearexcept(FE_ALL_EXCEPT);
  invalid_operation();
  {
    const fp_flags_guard guard;
    std::feclearexcept(FE_ALL_EXCEPT);
  }
  EXPECT_NE(std::fetestexcept(FE_INVALID), 0);
  EXPECT_EQ(std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW), 0);
  std::feclearexcept(FE_ALL_EXCEPT);
}

}  // namespace
}  // namespace ozdgemm::detail
