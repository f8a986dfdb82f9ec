// Dynamic hand-out of the column tiles of C to workers (GPUs, or partitions of one GPU): the
// scheduler of the multi-GPU host path (issue 8). There is no static split: a worker takes the
// next tile when it is free, so a GPU that is shared with other work, or slower, simply takes
// fewer tiles. A worker that fails gives its tile back and retires; the tiles no worker
// finishes are left for the CPU BLAS, and the caller learns exactly which ones.
//
// Tiles are whole columns of C. With fast scaling every column's result depends on that column
// of B and on A alone, so any assignment of tiles to workers gives the bits of one call
// (tests/cpu/tile_queue_test.cpp checks it against the host reference). Accurate scaling's row
// exponents depend on all of B: such calls are not split.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace ozdgemm::detail {

class tile_queue {
 public:
  struct tile {
    int64_t index;  // 0 .. tiles() - 1, left to right
    int64_t j0;     // first column of C
    int64_t width;  // columns
  };

  // Columns [0, n) in tiles of `width` (the last one may be narrower). n >= 0, width >= 1.
  tile_queue(int64_t n, int64_t width);

  int64_t tiles() const { return count_; }

  // The next tile for a free worker; false once none is left to hand out.
  bool take(tile* t);
  // The worker finished t: its columns of C hold the result.
  void done(const tile& t);
  // The worker could not finish t (nothing of it was written): t goes back to the front of the
  // queue for another worker. The worker must not take more tiles.
  void give_back(const tile& t);

  // After every worker has stopped: the tiles never finished, left to right.
  std::vector<tile> unfinished() const;
  int64_t finished() const;

 private:
  tile make(int64_t index) const;

  int64_t n_, width_, count_;
  mutable std::mutex mutex_;
  std::deque<int64_t> pending_;
  std::vector<bool> done_;
  int64_t finished_ = 0;
};

}  // namespace ozdgemm::detail
