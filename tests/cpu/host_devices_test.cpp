// The multi-GPU host path's settings: OZDGEMM_DEVICES's and OZDGEMM_HOST_FAIL_AFTER's
// syntax (src/dispatch/settings), OZDGEMM_DEVICES resolved against the GPU count
// (src/dispatch/device_select), and the 90%-of-free-memory rule that the host path and the
// engine's workspaces share (src/engine/handle_context).
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "engine/handle_context.hpp"
#include "dispatch/settings.hpp"
#include "dispatch/device_select.hpp"

namespace ozdgemm::detail {
namespace {

TEST(HostDevices, DeviceListsParse) {
  std::vector<int> d;
  bool all = true;
  ASSERT_TRUE(parse_device_list("0", &d, &all));
  EXPECT_EQ(d, std::vector<int>{0});
  EXPECT_FALSE(all);
  ASSERT_TRUE(parse_device_list("3,1,0,1", &d, &all));
  EXPECT_EQ(d, (std::vector<int>{3, 1, 0, 1})) << "order and repeats are kept";
  ASSERT_TRUE(parse_device_list("1023", &d, &all));
  EXPECT_EQ(d, std::vector<int>{1023});
  ASSERT_TRUE(parse_device_list("all", &d, &all));
  EXPECT_TRUE(all);
  EXPECT_TRUE(d.empty());
}

TEST(HostDevices, InvalidDeviceListsAreRefusedAndChangeNothing) {
  for (const char* bad : {"", ",", "0,", ",0", "0,,1", "-1", "+1", " 0", "0 ", "1024", "0,1024",
                          "99999999999999999999", "a", "0,x", "ALL", "all,0", "0;1", "1.5"}) {
    std::vector<int> d{7};
    bool all = false;
    EXPECT_FALSE(parse_device_list(bad, &d, &all)) << "'" << bad << "'";
    EXPECT_EQ(d, std::vector<int>{7}) << "'" << bad << "'";
    EXPECT_FALSE(all) << "'" << bad << "'";
  }
  std::vector<int> d;
  bool all = false;
  EXPECT_FALSE(parse_device_list(nullptr, &d, &all));
}

TEST(HostDevices, FailAfterParses) {
  long long tiles = -1;
  int worker = -2;
  ASSERT_TRUE(parse_fail_after("0", &tiles, &worker));
  EXPECT_EQ(tiles, 0);
  EXPECT_EQ(worker, -1) << "no @: every worker";
  ASSERT_TRUE(parse_fail_after("3@1", &tiles, &worker));
  EXPECT_EQ(tiles, 3);
  EXPECT_EQ(worker, 1);
  for (const char* bad : {"", "@1", "1@", "-1", "1@-1", "x", "1@x", "1@1@1", "1 @1", "1@99999"}) {
    tiles = 5;
    worker = 5;
    EXPECT_FALSE(parse_fail_after(bad, &tiles, &worker)) << "'" << bad << "'";
    EXPECT_EQ(tiles, 5);
    EXPECT_EQ(worker, 5);
  }
}

TEST(HostDevices, UnsetMeansTheSingleGpuOfTheOldRule) {
  const device_list l = choose_devices(false, {}, 2, 4);
  EXPECT_EQ(l.devices, std::vector<int>{2});
  EXPECT_TRUE(l.warning.empty());
  // OZDGEMM_DEVICE out of range: the CPU BLAS, as before.
  EXPECT_TRUE(choose_devices(false, {}, 4, 4).devices.empty());
  EXPECT_EQ(choose_devices(false, {}, 4, 4).reason, "OZDGEMM_DEVICE out of range");
}

TEST(HostDevices, AllMeansEveryVisibleGpu) {
  EXPECT_EQ(choose_devices(true, {}, 0, 3).devices, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(choose_devices(true, {}, 0, 1).devices, std::vector<int>{0});
}

TEST(HostDevices, ListedGpusThatDoNotExistAreDroppedWithAWarning) {
  const device_list l = choose_devices(false, {0, 5, 1, 0}, 0, 2);
  EXPECT_EQ(l.devices, (std::vector<int>{0, 1, 0}));
  EXPECT_NE(l.warning.find("5"), std::string::npos) << l.warning;
  EXPECT_NE(l.warning.find("left out"), std::string::npos) << l.warning;
  const device_list none = choose_devices(false, {2, 3}, 0, 2);
  EXPECT_TRUE(none.devices.empty());
  EXPECT_NE(none.warning.find("CPU BLAS"), std::string::npos) << none.warning;
}

TEST(HostDevices, NoGpuMeansNoDevices) {
  EXPECT_TRUE(choose_devices(true, {}, 0, 0).devices.empty());
  EXPECT_TRUE(choose_devices(false, {0}, 0, 0).devices.empty());
  EXPECT_TRUE(choose_devices(false, {}, 0, -1).devices.empty());
}

// Growing from `held` to `need` bytes is allowed up to 90% of (free + held): what is held is
// released first. The engine's workspace and the host path's buffers both use this rule.
TEST(HostDevices, NinetyPercentOfFreeMemoryRule) {
  constexpr size_t kGiB = size_t{1} << 30;
  EXPECT_TRUE(within_free_memory(9 * kGiB, 0, 10 * kGiB, 1));
  EXPECT_FALSE(within_free_memory(9 * kGiB + 1, 0, 10 * kGiB, 1));
  EXPECT_TRUE(within_free_memory(9 * kGiB, 2 * kGiB, 8 * kGiB, 1));
  EXPECT_FALSE(within_free_memory(9 * kGiB + 1, 2 * kGiB, 8 * kGiB, 1));
  EXPECT_TRUE(within_free_memory(0, 0, 0, 1));
  EXPECT_FALSE(within_free_memory(1, 0, 0, 1));
}

}  // namespace
}  // namespace ozdgemm::detail
