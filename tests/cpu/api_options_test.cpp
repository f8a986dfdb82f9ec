// The interposer hands its settings to the C API as ozdgemm_options_t (dispatch/settings.hpp,
// api_options): every moduli setting, scaling and target maps to the C API's own codes.
#include <gtest/gtest.h>

#include "dispatch/settings.hpp"
#include "ozdgemm/ozdgemm.hpp"

namespace ozdgemm::test {
namespace {

using detail::accuracy_kind;
using detail::moduli_setting;

TEST(ApiOptions, MirrorTheSettings) {
  detail::config c;
  ozdgemm_options_t o = detail::api_options(c);
  // The interposer's defaults are the C API's: the certified count, fast scaling, target native.
  const ozdgemm_options_t d = ozdgemm_default_options();
  EXPECT_EQ(o.num_moduli, d.num_moduli);
  EXPECT_EQ(o.num_moduli, OZDGEMM_MODULI_CERTIFIED);
  EXPECT_EQ(o.scaling, d.scaling);
  EXPECT_EQ(o.scaling, OZDGEMM_SCALING_FAST);
  EXPECT_EQ(o.accuracy, d.accuracy);
  EXPECT_EQ(o.accuracy, OZDGEMM_ACCURACY_NATIVE);
  const ozdgemm::options cpp;
  EXPECT_EQ(cpp.num_moduli, d.num_moduli);
  EXPECT_EQ(static_cast<int>(cpp.scaling), static_cast<int>(d.scaling));
  EXPECT_EQ(cpp.accuracy, d.accuracy);

  c.moduli = moduli_setting::fixed(9);
  c.scaling = detail::scaling_mode::accurate;
  o = detail::api_options(c);
  EXPECT_EQ(o.num_moduli, 9);
  EXPECT_EQ(o.scaling, OZDGEMM_SCALING_ACCURATE);

  c.moduli = moduli_setting::automatic();
  c.accuracy = {accuracy_kind::bits, 40};
  o = detail::api_options(c);
  EXPECT_EQ(o.num_moduli, OZDGEMM_MODULI_AUTO);
  EXPECT_EQ(o.accuracy, 40);

  c.moduli = moduli_setting::certified();
  c.accuracy = {accuracy_kind::max, 0};
  o = detail::api_options(c);
  EXPECT_EQ(o.num_moduli, OZDGEMM_MODULI_CERTIFIED);
  EXPECT_EQ(o.accuracy, OZDGEMM_ACCURACY_MAX);
}

}  // namespace
}  // namespace ozdgemm::test
