// The multi-GPU host path's tile scheduler (src/host_path/tile_queue.hpp), with threads as the
// workers and the host reference (bit-identical to the GPU engine) as each worker's multiply:
// whatever the assignment of tiles to workers, slow workers, failing workers, or tiles left to
// the CPU, C must come out bit for bit as one call over all columns (fast scaling).
#include "host_path/tile_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "core/gemm_problem.hpp"
#include "reference/host_reference.hpp"
#include "cpu/cpu_test_util.hpp"
#include "support/inputs.hpp"

namespace {

using namespace ozdgemm::detail;
using ozdgemm::test::input_kind;
using ozdgemm::test::make_inputs;
using ozdgemm::test::same_bits;

constexpr int kModuli = 14;
constexpr int64_t kM = 37, kN = 203, kK = 61;

struct problem {
  ozdgemm::test::operand_pair in = make_inputs(input_kind::phi_2, kM, kN, kK, 99);
  std::vector<double> c0 = std::vector<double>(kM * kN, 0.25);

  // Columns [j0, j0 + width) of C = 1.5 A B - 0.5 C0, into c (m x n, ld m).
  void multiply(int64_t j0, int64_t width, std::vector<double>& c) const {
    for (int64_t j = j0; j < j0 + width; ++j)
      for (int64_t i = 0; i < kM; ++i) c[j * kM + i] = c0[j * kM + i];
    const gemm_problem p{kM, width, kK, operand_a(op_kind::n, in.a.ptr(), in.a.ld),
                         operand_b(op_kind::n, in.b.ptr() + j0 * in.b.ld, in.b.ld),
                         c.data() + j0 * kM, kM};
    reference_dgemm(p, 1.5, -0.5, kModuli, scaling_mode::fast);
  }
  std::vector<double> whole() const {
    std::vector<double> c(kM * kN);
    multiply(0, kN, c);
    return c;
  }
};

// Runs `workers` threads over the queue; worker w sleeps delay(w) per tile and fails (gives the
// tile back and retires) on its fail_at(w)-th tile (0: never). Returns tiles done per worker.
template <class Delay, class FailAt>
std::vector<int> run_workers(const problem& pb, tile_queue& q, std::vector<double>& c, int workers,
                             Delay delay, FailAt fail_at) {
  std::vector<int> count(workers, 0);
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      tile_queue::tile t{};
      int taken = 0;
      while (q.take(&t)) {
        if (++taken == fail_at(w)) {
          q.give_back(t);
          return;
        }
        std::this_thread::sleep_for(delay(w));
        pb.multiply(t.j0, t.width, c);
        q.done(t);
        ++count[w];
      }
    });
  for (std::thread& t : pool) t.join();
  return count;
}

TEST(TileQueue, TilesCoverTheColumnsOnceInOrder) {
  tile_queue q(203, 16);
  EXPECT_EQ(q.tiles(), 13);
  tile_queue::tile t{};
  int64_t next = 0;
  while (q.take(&t)) {
    EXPECT_EQ(t.j0, next);
    EXPECT_EQ(t.width, std::min<int64_t>(16, 203 - next));
    next += t.width;
  }
  EXPECT_EQ(next, 203);
  EXPECT_EQ(q.unfinished().size(), 13u);  // taken but not finished
  EXPECT_THROW(tile_queue(5, 0), std::invalid_argument);
  EXPECT_EQ(tile_queue(0, 4).tiles(), 0);
}

TEST(TileQueue, AnyAssignmentGivesTheBitsOfOneCall) {
  const problem pb;
  const std::vector<double> want = pb.whole();
  for (int workers : {1, 2, 3, 4})
    for (int64_t width : {1, 7, 16, 64, 203}) {
      tile_queue q(kN, width);
      std::vector<double> c(kM * kN, -1.0);
      std::mt19937 g(static_cast<unsigned>(workers * 1000 + width));
      std::vector<int> jitter(workers);
      for (int& j : jitter) j = static_cast<int>(g() % 300);
      run_workers(pb, q, c, workers, [&](int w) { return std::chrono::microseconds(jitter[w]); },
                  [](int) { return 0; });
      EXPECT_EQ(q.finished(), q.tiles());
      EXPECT_TRUE(q.unfinished().empty());
      EXPECT_TRUE(same_bits(c, want)) << workers << " workers, tiles of " << width;
    }
}

TEST(TileQueue, ASlowWorkerTakesFewerTiles) {
  const problem pb;
  tile_queue q(kN, 4);  // 51 tiles
  std::vector<double> c(kM * kN, -1.0);
  const std::vector<int> count = run_workers(
      pb, q, c, 3,
      [](int w) { return std::chrono::microseconds(w == 0 ? 20000 : 500); },
      [](int) { return 0; });
  EXPECT_EQ(count[0] + count[1] + count[2], q.tiles());
  EXPECT_LT(count[0] * 4, count[1] + count[2]) << "no static split: the slow worker must yield";
  EXPECT_TRUE(same_bits(c, pb.whole()));
}

TEST(TileQueue, AFailingWorkerRetiresAndOthersFinishItsTile) {
  const problem pb;
  tile_queue q(kN, 8);
  std::vector<double> c(kM * kN, -1.0);
  const std::vector<int> count = run_workers(
      pb, q, c, 3, [](int) { return std::chrono::microseconds(200); },
      [](int w) { return w == 1 ? 2 : 0; });  // worker 1 fails on its second tile
  EXPECT_EQ(count[1], 1);
  EXPECT_EQ(q.finished(), q.tiles());
  EXPECT_TRUE(same_bits(c, pb.whole()));
}

TEST(TileQueue, WhenEveryWorkerFailsTheCpuFinishesExactlyTheRest) {
  const problem pb;
  tile_queue q(kN, 10);  // 21 tiles
  std::vector<double> c(kM * kN, -1.0);
  run_workers(pb, q, c, 2, [](int) { return std::chrono::microseconds(100); },
              [](int w) { return w == 0 ? 3 : 5; });
  const std::vector<tile_queue::tile> left = q.unfinished();
  EXPECT_EQ(static_cast<int64_t>(left.size()) + q.finished(), q.tiles());
  EXPECT_EQ(q.finished(), 2 + 4);
  for (const tile_queue::tile& t : left) pb.multiply(t.j0, t.width, c);  // "the CPU BLAS"
  EXPECT_TRUE(same_bits(c, pb.whole()));
}

// Columns [j0, j0 + width) of C = 1.5 A B - 0.5 C in place, as the host path and the CPU BLAS
// write the caller's C: a column computed twice would read its own result as C.
void multiply_in_place(const problem& pb, int64_t j0, int64_t width, std::vector<double>& c) {
  const gemm_problem p{kM, width, kK, operand_a(op_kind::n, pb.in.a.ptr(), pb.in.a.ld),
                       operand_b(op_kind::n, pb.in.b.ptr() + j0 * pb.in.b.ld, pb.in.b.ld),
                       c.data() + j0 * kM, kM};
  reference_dgemm(p, 1.5, -0.5, kModuli, scaling_mode::fast);
}

TEST(TileQueue, APartialGiveBackReturnsOnlyTheUnwrittenColumns) {
  tile_queue q(100, 30);  // 30, 30, 30, 10
  tile_queue::tile t{};
  ASSERT_TRUE(q.take(&t));
  EXPECT_EQ(t.j0, 0);
  q.give_back(t, 12);  // columns 0..11 written
  tile_queue::tile rest{};
  ASSERT_TRUE(q.take(&rest));
  EXPECT_EQ(rest.index, 0);
  EXPECT_EQ(rest.j0, 12);
  EXPECT_EQ(rest.width, 18);
  EXPECT_THROW(q.give_back(t), std::logic_error) << "the tile as it was before the give-back";
  EXPECT_THROW(q.give_back(rest, 19), std::logic_error);
  q.give_back(rest, 5);  // 12..16 written: 17..29 left
  const std::vector<tile_queue::tile> left = q.unfinished();
  ASSERT_EQ(left.size(), 4u);
  EXPECT_EQ(left[0].j0, 17);
  EXPECT_EQ(left[0].width, 13);
  ASSERT_TRUE(q.take(&rest));
  q.give_back(rest, rest.width);  // all of it written: done, not pending
  EXPECT_EQ(q.finished(), 1);
  const std::vector<column_range> ranges = merge_columns(q.unfinished());
  ASSERT_EQ(ranges.size(), 1u) << "adjacent tiles merge into one CPU BLAS call";
  EXPECT_EQ(ranges[0].j0, 30);
  EXPECT_EQ(ranges[0].count, 70);
}

TEST(TileQueue, MergedRangesKeepGapsAndOrder) {
  tile_queue q(50, 10);
  tile_queue::tile t{};
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(q.take(&t));
    if (i == 1) q.done(t);
    if (i == 3) q.give_back(t, 4);
  }
  // Unfinished: [0,10) [20,30) [34,40) [40,50) -> [0,10) [20,30) [34,50).
  std::vector<tile_queue::tile> tiles;
  tiles.reserve(static_cast<size_t>(q.tiles()));
  q.unfinished_into(&tiles);
  std::vector<column_range> ranges;
  ranges.reserve(tiles.size());
  merge_columns_into(tiles, &ranges);
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].j0, 0);
  EXPECT_EQ(ranges[0].count, 10);
  EXPECT_EQ(ranges[1].j0, 20);
  EXPECT_EQ(ranges[1].count, 10);
  EXPECT_EQ(ranges[2].j0, 34);
  EXPECT_EQ(ranges[2].count, 16);
}

// The host path's contract end to end, with threads as workers and the host reference as both
// their multiply and the CPU BLAS: C is updated in place (beta reads it), workers fail part way
// through a tile having written some of its columns, and the caller computes exactly the
// merged unfinished ranges. Any column done twice or not at all changes the bits.
TEST(TileQueue, PartialFailuresAndCpuRangesGiveTheBitsOfOneCall) {
  const problem pb;
  std::vector<double> want = pb.c0;
  multiply_in_place(pb, 0, kN, want);
  for (int workers : {1, 2, 3, 4})
    for (int64_t width : {7, 16, 64}) {
      tile_queue q(kN, width);
      std::vector<double> c = pb.c0;
      std::vector<std::thread> pool;
      for (int w = 0; w < workers; ++w)
        pool.emplace_back([&, w] {
          tile_queue::tile t{};
          int taken = 0;
          while (q.take_or_wait(&t)) {
            // Worker w fails on its (w + 2)-th tile after writing w + 1 of its columns; the
            // last worker never fails, except when it is the only one.
            const bool fails = (w + 1 < workers || workers == 1) && ++taken == w + 2;
            const int64_t part = fails ? std::min<int64_t>(w + 1, t.width) : t.width;
            multiply_in_place(pb, t.j0, part, c);
            if (fails) {
              q.give_back(t, part);
              return;
            }
            q.done(t);
          }
        });
      for (std::thread& t : pool) t.join();
      const std::vector<column_range> left = merge_columns(q.unfinished());
      if (workers > 1) {
        EXPECT_TRUE(left.empty()) << "a surviving worker waits for and takes every tile back";
      }
      for (const column_range& r : left) multiply_in_place(pb, r.j0, r.count, c);
      EXPECT_TRUE(same_bits(c, want)) << workers << " workers, tiles of " << width;
    }
}

// take_or_wait: a worker holding nothing waits while another holds a tile, and gets it if it is
// given back; once nothing is held or waiting it returns false.
TEST(TileQueue, AnIdleWorkerWaitsForTilesThatMayComeBack) {
  tile_queue q(20, 10);
  tile_queue::tile a{}, b{};
  ASSERT_TRUE(q.take(&a));
  ASSERT_TRUE(q.take(&b));
  EXPECT_FALSE(q.take(&a)) << "take never waits";
  std::atomic<int> got{-1};
  std::thread idle([&] {
    tile_queue::tile t{};
    got = q.take_or_wait(&t) ? static_cast<int>(t.j0) : -2;
    if (got >= 0) q.done(t);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(got.load(), -1) << "two tiles held elsewhere: it must wait";
  q.done(a);
  q.give_back(b, 3);  // columns 10..12 written
  idle.join();
  EXPECT_EQ(got.load(), 13);
  tile_queue::tile t{};
  EXPECT_FALSE(q.take_or_wait(&t)) << "nothing held, nothing waiting";
  EXPECT_EQ(q.finished(), 2);
}

TEST(TileQueue, MisuseIsRefused) {
  tile_queue q(10, 5);
  tile_queue::tile t{};
  ASSERT_TRUE(q.take(&t));
  q.done(t);
  EXPECT_THROW(q.done(t), std::logic_error);
  EXPECT_THROW(q.give_back(t), std::logic_error);
}

}  // namespace

// plan_tiles: every column once, left to right; one worker keeps the measured equal tiles;
// several workers get the same wide tiles, then a tail that narrows to about
// (columns left) / (2 x workers), never under kMinTailTile but for the very last.
TEST(TilePlan, CoversTheColumnsAndNarrowsOnlyTheTail) {
  for (int workers : {1, 2, 3, 4, 8})
    for (int64_t n : {1, 255, 2047, 2048, 5000, 16384, 32768, 50001, 100000}) {
      const std::vector<int64_t> w = plan_tiles(n, workers, 0);
      int64_t sum = 0;
      for (int64_t x : w) {
        EXPECT_GE(x, 1);
        sum += x;
      }
      EXPECT_EQ(sum, n) << n << " columns, " << workers << " workers";
      const int64_t widest = *std::max_element(w.begin(), w.end());
      EXPECT_EQ(w.front(), widest) << "the first tile is the widest: the workspace's size";
      EXPECT_TRUE(std::is_sorted(w.rbegin(), w.rend())) << "widths never grow";
      for (size_t i = 0; i + 1 < w.size(); ++i) {
        EXPECT_EQ(w[i] % 256, 0) << "multiples of 256 but for the last tile";
        if (workers > 1 && widest >= kMinTailTile) {
          EXPECT_GE(w[i], kMinTailTile);
        }
      }
      if (workers == 1) {
        for (size_t i = 0; i + 1 < w.size(); ++i) EXPECT_EQ(w[i], widest) << "one worker: equal";
      }
    }
  // The measured one-GPU tiles: n = 16384 in eight of 2048, n = 8192 in four of 2048.
  EXPECT_EQ(plan_tiles(16384, 1, 0), std::vector<int64_t>(8, 2048));
  EXPECT_EQ(plan_tiles(8192, 1, 0), std::vector<int64_t>(4, 2048));
  // Two workers at n = 32768: tiles of 4096 while each worker has two or more left, then the
  // tail; the last tiles are at most a quarter of the wide ones.
  const std::vector<int64_t> two = plan_tiles(32768, 2, 0);
  EXPECT_EQ(std::count(two.begin(), two.end(), 4096), 5);
  EXPECT_LE(two.back() * 4, two.front());
  EXPECT_LE(two[two.size() - 2] * 4, two.front());
  // OZDGEMM_HOST_TILE: equal tiles of that width whatever the workers.
  EXPECT_EQ(plan_tiles(1000, 4, 300), (std::vector<int64_t>{300, 300, 300, 100}));
  EXPECT_EQ(plan_tiles(100, 2, 300), std::vector<int64_t>{100});
  EXPECT_TRUE(plan_tiles(0, 2, 0).empty());
  EXPECT_THROW(plan_tiles(10, 0, 0), std::invalid_argument);
}

// A queue of planned, unequal widths hands its tiles out left to right, and a give-back works
// on the tile as planned.
TEST(TilePlan, UnequalTilesQueueAndGiveBack) {
  tile_queue q(std::vector<int64_t>{50, 30, 20, 3});
  EXPECT_EQ(q.tiles(), 4);
  tile_queue::tile t{};
  int64_t next = 0;
  std::vector<tile_queue::tile> taken;
  while (q.take(&t)) {
    EXPECT_EQ(t.j0, next);
    next += t.width;
    taken.push_back(t);
  }
  EXPECT_EQ(next, 103);
  q.give_back(taken[1], 10);  // columns 50..59 written
  ASSERT_TRUE(q.take(&t));
  EXPECT_EQ(t.j0, 60);
  EXPECT_EQ(t.width, 20);
  q.done(t);
  q.done(taken[0]);
  const std::vector<column_range> left = merge_columns(q.unfinished());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].j0, 80);
  EXPECT_EQ(left[0].count, 23);
  EXPECT_THROW(tile_queue(std::vector<int64_t>{4, 0}), std::invalid_argument);
}

// Any planned widths, any assignment: the bits of one call (the engine prepares A once per
// worker and reuses it for tiles of any width).
TEST(TilePlan, PlannedTilesGiveTheBitsOfOneCall) {
  const problem pb;
  const std::vector<double> want = pb.whole();
  const std::vector<std::vector<int64_t>> plans = {
      {100, 60, 30, 10, 3}, {1, 2, 200}, {203}, {64, 64, 64, 11}};
  for (const std::vector<int64_t>& plan : plans)
    for (int workers : {1, 2, 3}) {
      tile_queue q(plan);
      std::vector<double> c(kM * kN, -1.0);
      run_workers(
          pb, q, c, workers, [](int w) { return std::chrono::microseconds(50 * w); },
          [](int) { return 0; });
      EXPECT_EQ(q.finished(), q.tiles());
      EXPECT_TRUE(same_bits(c, want)) << workers << " workers, " << plan.size() << " tiles";
    }
}
