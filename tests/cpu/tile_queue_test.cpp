// The multi-GPU host path's tile scheduler (src/interpose/tile_queue.hpp), with threads as the
// workers and the host reference (bit-identical to the GPU engine) as each worker's multiply:
// whatever the assignment of tiles to workers, slow workers, failing workers, or tiles left to
// the CPU, C must come out bit for bit as one call over all columns (fast scaling).
#include "interpose/tile_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "core/gemm_problem.hpp"
#include "reference/host_reference.hpp"
#include "support/inputs.hpp"

namespace {

using namespace ozdgemm::detail;
using ozdgemm::test::input_kind;
using ozdgemm::test::make_inputs;

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

bool same_bits(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

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

TEST(TileQueue, MisuseIsRefused) {
  tile_queue q(10, 5);
  tile_queue::tile t{};
  ASSERT_TRUE(q.take(&t));
  q.done(t);
  EXPECT_THROW(q.done(t), std::logic_error);
  EXPECT_THROW(q.give_back(t), std::logic_error);
}

}  // namespace
