// A once for several host-path workers (src/host_path/a_share.hpp): which GPU brings each
// segment of A to each worker, the hand-over between the workers' threads, and the process's
// record of which GPU pairs copy directly, with fake peer operations in place of CUDA's.
#include "host_path/a_share.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

namespace {

using namespace ozdgemm::detail;

// Every segment reaches every worker exactly once: from the host (the worker owns it) or from
// a worker that owns it and whose GPU is linked to this one.
void expect_sound(const a_share_plan& p, const std::vector<int>& devices,
                  const std::function<bool(int, int)>& linked) {
  const int workers = static_cast<int>(devices.size());
  ASSERT_EQ(p.source.size(), devices.size());
  int64_t covered = 0;
  for (int g = 0; g < p.segments.count; ++g) {
    EXPECT_GE(p.segments.columns(g), p.segments.cols > 0 ? 1 : 0) << "segment " << g;
    covered += p.segments.columns(g);
  }
  EXPECT_EQ(covered, p.segments.cols);
  for (int w = 0; w < workers; ++w)
    for (int g = 0; g < p.segments.count; ++g) {
      const int s = p.source[static_cast<size_t>(w)][static_cast<size_t>(g)];
      ASSERT_GE(s, 0);
      ASSERT_LT(s, workers);
      EXPECT_TRUE(p.owns(s, g)) << "worker " << w << " copies segment " << g << " from " << s
                                << ", which does not bring it from the host";
      const int a = devices[static_cast<size_t>(w)], b = devices[static_cast<size_t>(s)];
      EXPECT_TRUE(a == b || (linked(a, b) && linked(b, a)))
          << "worker " << w << " copies from an unlinked GPU";
    }
}

int host_segments(const a_share_plan& p) {
  int n = 0;
  for (size_t w = 0; w < p.source.size(); ++w) n += p.owned(static_cast<int>(w));
  return n;
}

TEST(AShare, AllLinkedGpusPackEachSegmentOnce) {
  const auto all = [](int, int) { return true; };
  for (int gpus : {2, 3, 4, 8}) {
    std::vector<int> devices(static_cast<size_t>(gpus));
    for (int d = 0; d < gpus; ++d) devices[static_cast<size_t>(d)] = d;
    const a_share_plan p = plan_a_share(devices, 32768, all, true);
    expect_sound(p, devices, all);
    EXPECT_EQ(p.segments.count, kSegmentsPerWorker * gpus);
    EXPECT_EQ(host_segments(p), p.segments.count) << "A crosses from the host once";
    for (int w = 0; w < gpus; ++w) EXPECT_EQ(p.owned(w), kSegmentsPerWorker) << "shared evenly";
  }
}

TEST(AShare, SharingOffOrOneWorkerPacksAllOfAPerWorker) {
  const auto all = [](int, int) { return true; };
  for (const std::vector<int>& devices : {std::vector<int>{0, 1, 2}, std::vector<int>{3}}) {
    const a_share_plan p = plan_a_share(devices, 1000, all, devices.size() == 1);
    expect_sound(p, devices, all);
    EXPECT_EQ(p.segments.count, 1);
    for (size_t w = 0; w < devices.size(); ++w) EXPECT_EQ(p.owned(static_cast<int>(w)), 1);
  }
}

TEST(AShare, UnlinkedGpusFallBackToTheirOwnPacking) {
  const auto none = [](int, int) { return false; };
  const std::vector<int> devices{0, 1, 2, 3};
  const a_share_plan p = plan_a_share(devices, 5000, none, true);
  expect_sound(p, devices, none);
  EXPECT_EQ(host_segments(p), 4 * p.segments.count) << "no links: every worker packs all of A";
}

// Workers on one GPU (OZDGEMM_DEVICES=0,0 or several workers per GPU) always share: a copy on
// one GPU needs no link. This is what runs the exchange on a one-GPU machine.
TEST(AShare, WorkersOnOneGpuShareWithoutLinks) {
  const auto none = [](int, int) { return false; };
  const std::vector<int> devices{0, 1, 0, 1};  // GPU-major: two GPUs, two workers each
  const a_share_plan p = plan_a_share(devices, 4096, none, true);
  expect_sound(p, devices, none);
  EXPECT_EQ(host_segments(p), 2 * p.segments.count) << "once per GPU";
  for (int g = 0; g < p.segments.count; ++g) {
    EXPECT_EQ(devices[static_cast<size_t>(p.source[0][static_cast<size_t>(g)])], 0);
    EXPECT_EQ(devices[static_cast<size_t>(p.source[3][static_cast<size_t>(g)])], 1);
  }
}

// Two linked pairs with no link between them (two NVLink bridges): each pair packs A once.
TEST(AShare, LinkedPairsFormGroups) {
  const auto pairs = [](int a, int b) { return a / 2 == b / 2; };
  const std::vector<int> devices{0, 1, 2, 3};
  const a_share_plan p = plan_a_share(devices, 32768, pairs, true);
  expect_sound(p, devices, pairs);
  EXPECT_EQ(host_segments(p), 2 * p.segments.count);
  for (int w = 0; w < 4; ++w) EXPECT_EQ(p.owned(w) * 2, p.segments.count);
}

// A link that holds one way only is no link.
TEST(AShare, OneWayAccessIsNotALink) {
  const auto one_way = [](int a, int b) { return a < b; };
  const std::vector<int> devices{0, 1};
  const a_share_plan p = plan_a_share(devices, 100, one_way, true);
  expect_sound(p, devices, [](int, int) { return false; });
  EXPECT_EQ(host_segments(p), 2 * p.segments.count);
}

TEST(AShare, NarrowAHasNoEmptySegments) {
  const auto all = [](int, int) { return true; };
  const std::vector<int> devices{0, 1, 2, 3};
  for (int64_t cols : {1, 3, 15, 16, 17}) {
    const a_share_plan p = plan_a_share(devices, cols, all, true);
    expect_sound(p, devices, all);
    EXPECT_LE(p.segments.count, cols);
  }
  EXPECT_THROW(plan_a_share({}, 10, all, true), std::invalid_argument);
}

// The hand-over: a waiter blocks until the segment is published, learns of a retirement without
// it (then packs the segment itself), and a verification holds even if the worker later retires
// (it failed after its copies were good).
TEST(AShareState, WaitsEndOnPublicationOrRetirement) {
  a_share_state st(3, 4);
  std::atomic<int> got{-1};
  std::thread waiter([&] { got = st.wait_published(1, 2) ? 1 : 0; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(got.load(), -1) << "waits while worker 1 may still publish";
  st.published(1, 2);
  waiter.join();
  EXPECT_EQ(got.load(), 1);

  std::thread retiring([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    st.retired(2);
  });
  EXPECT_FALSE(st.wait_published(2, 0)) << "retired without publishing";
  EXPECT_FALSE(st.wait_verified(2));
  retiring.join();

  st.published(0, 1);
  st.verified(0);
  st.retired(0);
  EXPECT_TRUE(st.wait_published(0, 1)) << "published before it retired";
  EXPECT_TRUE(st.wait_verified(0));
  EXPECT_FALSE(st.wait_published(0, 3));
}

// Threads as workers: each publishes its own segments, copies the others' as they come, and a
// worker that fails before publishing leaves its segments to the others' own packing. Nothing
// hangs, and every worker ends with every segment.
TEST(AShareState, WorkersEndWithEverySegmentWhateverFails) {
  const auto all = [](int, int) { return true; };
  const std::vector<int> devices{0, 1, 2, 3};
  const a_share_plan p = plan_a_share(devices, 1024, all, true);
  for (int failing : {-1, 0, 2}) {
    a_share_state st(4, p.segments.count);
    std::vector<std::vector<int>> have(4,
                                       std::vector<int>(static_cast<size_t>(p.segments.count), 0));
    std::vector<std::thread> pool;
    pool.reserve(4);
    for (int w = 0; w < 4; ++w)
      pool.emplace_back([&, w] {
        if (w != failing) {
          for (int g = 0; g < p.segments.count; ++g)
            if (p.owns(w, g)) {
              have[static_cast<size_t>(w)][static_cast<size_t>(g)] = 1;  // "packed from the host"
              st.published(w, g);
            }
          st.verified(w);
          for (int g = 0; g < p.segments.count; ++g) {
            const int s = p.source[static_cast<size_t>(w)][static_cast<size_t>(g)];
            if (s == w) continue;
            const bool copied = st.wait_published(s, g) && st.wait_verified(s);
            have[static_cast<size_t>(w)][static_cast<size_t>(g)] = copied ? 2 : 1;
          }
        }
        st.retired(w);
      });
    for (std::thread& t : pool) t.join();
    for (int w = 0; w < 4; ++w) {
      if (w == failing) continue;
      for (int g = 0; g < p.segments.count; ++g) {
        const int how = have[static_cast<size_t>(w)][static_cast<size_t>(g)];
        EXPECT_NE(how, 0) << "worker " << w << " lacks segment " << g;
        if (p.source[static_cast<size_t>(w)][static_cast<size_t>(g)] == failing) {
          EXPECT_EQ(how, 1) << "the failed owner's segments are packed again";
        }
      }
    }
  }
}

// peer_links: asked once per pair, both directions needed, an access already enabled (by the
// application, or an earlier call) counts, a failure to enable is remembered as no link.
TEST(PeerLinks, BothDirectionsOncePerPair) {
  std::vector<std::pair<int, int>> enabled;
  int asked = 0;
  peer_links links(peer_links::operations{[&](int from, int to) {
                                            ++asked;
                                            return !(from == 2 &&
                                                     to == 0);  // GPU 2 cannot reach GPU 0
                                          },
                                          [&](int from, int to) {
                                            enabled.emplace_back(from, to);
                                            if (from == 1 && to == 0)
                                              return peer_links::enable_result::already_enabled;
                                            if (from == 3 || to == 3)
                                              return peer_links::enable_result::failed;
                                            return peer_links::enable_result::enabled;
                                          }});
  EXPECT_TRUE(links.linked(0, 0));
  EXPECT_EQ(asked, 0) << "a GPU and itself need no peer access";
  EXPECT_TRUE(links.linked(0, 1)) << "already enabled counts";
  EXPECT_TRUE(links.linked(1, 0));
  EXPECT_EQ(enabled.size(), 2u) << "enabled once, both ways";
  EXPECT_FALSE(links.linked(0, 2)) << "one way only";
  EXPECT_FALSE(links.linked(3, 1)) << "enabling failed";
  const size_t calls = enabled.size();
  const int asks = asked;
  EXPECT_FALSE(links.linked(1, 3));
  EXPECT_FALSE(links.linked(2, 0));
  EXPECT_EQ(enabled.size(), calls) << "remembered";
  EXPECT_EQ(asked, asks);
}

}  // namespace
