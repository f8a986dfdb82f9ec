// The calibration cache (dispatch/calibration.hpp) on a real file system: where it lives, what
// a file holds and rejects, that a reader never sees a part of a file while many processes
// write it at once (as hundreds of MPI ranks starting together would), and the lock that lets
// one of them measure. The measurement itself needs a GPU (tests/gpu).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dispatch/calibration.hpp"

namespace ozdgemm::test {
namespace {

using detail::calibration_key;
using detail::gpu_rates;

calibration_key h200_key() { return {"NVIDIA H200", 9, 0, 13000, "0.1.0"}; }

gpu_rates rates(double scale) {
  gpu_rates r;
  r.fp64 = 57e12 * scale;
  r.int8 = 1.35e15 * scale;
  r.prep_bw = 2.1e12 * scale;
  r.crt_bw = 2.3e12 * scale;
  r.host_link = 20e9 * scale;
  return r;
}

class CalibrationCacheFiles : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ozdgemm_cache_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string dir_;
};

TEST(CalibrationCache, FileNameHoldsTheKeyInPlainCharacters) {
  const std::string name = detail::calibration_file_name(h200_key());
  EXPECT_EQ(name, "NVIDIA_H200-sm90-cuda13000-ozdgemm0.1.0.rates");
  calibration_key odd = h200_key();
  odd.gpu_name = "../NVIDIA RTX/6000";
  EXPECT_EQ(detail::calibration_file_name(odd).find('/'), std::string::npos);
}

TEST(CalibrationCache, FolderFollowsXdgThenHome) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved_xdg = xdg != nullptr ? xdg : "";
  const char* home = std::getenv("HOME");
  const std::string saved_home = home != nullptr ? home : "";
  setenv("XDG_CACHE_HOME", "/somewhere/cache", 1);
  EXPECT_EQ(detail::calibration_cache_dir(), "/somewhere/cache/ozdgemm");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/user", 1);
  EXPECT_EQ(detail::calibration_cache_dir(), "/home/user/.cache/ozdgemm");
  setenv("XDG_CACHE_HOME", "relative", 1);  // not absolute: ignored (XDG Base Directory spec)
  EXPECT_EQ(detail::calibration_cache_dir(), "/home/user/.cache/ozdgemm");
  if (xdg != nullptr)
    setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
  if (home != nullptr)
    setenv("HOME", saved_home.c_str(), 1);
  else
    unsetenv("HOME");
}

TEST(CalibrationCache, RatesRoundTripExactly) {
  const gpu_rates in = rates(1.0 / 3.0);
  gpu_rates out;
  ASSERT_TRUE(detail::parse_rates(detail::format_rates(h200_key(), in), h200_key(), &out));
  EXPECT_EQ(out.fp64, in.fp64);
  EXPECT_EQ(out.int8, in.int8);
  EXPECT_EQ(out.prep_bw, in.prep_bw);
  EXPECT_EQ(out.crt_bw, in.crt_bw);
  EXPECT_EQ(out.host_link, in.host_link);
}

TEST(CalibrationCache, ParseRejectsAnythingIncompleteOrForAnotherKey) {
  const std::string good = detail::format_rates(h200_key(), rates(1));
  gpu_rates out;
  calibration_key other = h200_key();
  other.driver_version = 13010;  // a driver update measures again
  EXPECT_FALSE(detail::parse_rates(good, other, &out));
  // Each line missing, in turn.
  std::istringstream lines(good);
  std::string line;
  std::vector<std::string> all;
  while (std::getline(lines, line)) all.push_back(line);
  for (size_t drop = 0; drop < all.size(); ++drop) {
    if (all[drop].empty() || all[drop][0] == '#') continue;
    std::string text;
    for (size_t i = 0; i < all.size(); ++i)
      if (i != drop) text += all[i] + "\n";
    EXPECT_FALSE(detail::parse_rates(text, h200_key(), &out)) << "without: " << all[drop];
  }
  for (const char* bad : {"-1", "0", "nan", "inf", "12x", ""}) {
    std::string text = good;
    const size_t at = text.find("\nfp64 ") + 6;
    text.replace(at, text.find('\n', at) - at, bad);
    EXPECT_FALSE(detail::parse_rates(text, h200_key(), &out)) << "fp64 " << bad;
  }
  EXPECT_FALSE(detail::parse_rates(good + "surprise 1\n", h200_key(), &out));
}

TEST_F(CalibrationCacheFiles, StoreThenLoadCreatesTheFolderPrivately) {
  const std::string dir = dir_ + "/a/b/ozdgemm";
  std::string why;
  ASSERT_TRUE(detail::store_cached_rates(dir, h200_key(), rates(2), &why)) << why;
  gpu_rates out;
  ASSERT_TRUE(detail::load_cached_rates(dir, h200_key(), &out));
  EXPECT_EQ(out.int8, rates(2).int8);
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  calibration_key other = h200_key();
  other.gpu_name = "NVIDIA H20";
  EXPECT_FALSE(detail::load_cached_rates(dir, other, &out));
}

// 16 processes store their own rates 50 times each while this one reads: every read finds a
// whole file of one of them, or none yet; none is ever a part of one, and no temporary file is
// left.
TEST_F(CalibrationCacheFiles, ConcurrentWritersNeverShowAPartialFile) {
  constexpr int kWriters = 16, kRounds = 50;
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::string why;
      for (int r = 0; r < kRounds; ++r)
        if (!detail::store_cached_rates(dir_, h200_key(), rates(1 + w), &why)) _exit(1);
      _exit(0);
    }
    pids.push_back(pid);
  }
  int reads = 0, found = 0;
  std::set<double> seen;
  for (bool running = true; running;) {
    gpu_rates out;
    ++reads;
    if (detail::load_cached_rates(dir_, h200_key(), &out)) {
      ++found;
      const double scale = out.fp64 / 57e12;
      EXPECT_EQ(scale, std::round(scale));
      EXPECT_EQ(out.int8, rates(scale).int8) << "a file mixing two writers";
      seen.insert(scale);
    }
    running = false;
    for (pid_t p : pids) running = running || waitpid(p, nullptr, WNOHANG) == 0;
  }
  for (pid_t p : pids) waitpid(p, nullptr, 0);
  gpu_rates last;
  EXPECT_TRUE(detail::load_cached_rates(dir_, h200_key(), &last));
  const std::string leftovers = dir_ + "/" + detail::calibration_file_name(h200_key()) + ".";
  EXPECT_NE(std::system(("ls '" + leftovers + "'* > /dev/null 2>&1").c_str()), 0)
      << "temporary files left behind";
  std::cout << "[ cache    ] " << reads << " reads, " << found << " found a file, from "
            << seen.size() << " different writers\n";
}

TEST_F(CalibrationCacheFiles, OneHolderOfTheLockAtATime) {
  auto first = std::make_unique<detail::calibration_lock>(dir_, h200_key(), 0);
  ASSERT_TRUE(first->locked());
  {
    // Another holder (flock locks belong to the open file, so a second open conflicts even in
    // this process) waits, then gives up.
    const detail::calibration_lock second(dir_, h200_key(), 50);
    EXPECT_FALSE(second.locked());
  }
  first.reset();
  const detail::calibration_lock third(dir_, h200_key(), 0);
  EXPECT_TRUE(third.locked());
  calibration_key other = h200_key();
  other.gpu_name = "NVIDIA B200";
  const detail::calibration_lock fourth(dir_, other, 0);
  EXPECT_TRUE(fourth.locked()) << "another key has its own lock";
}

}  // namespace
}  // namespace ozdgemm::test
