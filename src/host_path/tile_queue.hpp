// Dynamic hand-out of the column tiles of C to workers (GPUs, or partitions of one GPU): the
// scheduler of the multi-GPU host path. There is no static split: a worker takes the
// next tile when it is free, so a GPU that is shared with other work, or slower, simply takes
// fewer tiles. A worker that fails gives its tile back and retires; the tiles no worker
// finishes are left for the CPU BLAS, and the caller learns exactly which ones.
//
// Tiles are whole columns of C. With fast scaling every column's result depends on that column
// of B and on A alone, so any assignment of tiles to workers, and any widths, give the bits of
// one call (tests/cpu/tile_queue_test.cpp checks it against the host reference). Accurate
// scaling's row exponents depend on all of B: such calls are not split.
#pragma once

#include <condition_variable>
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
  // Columns [0, sum of widths) in tiles of these widths, left to right (each >= 1).
  explicit tile_queue(const std::vector<int64_t>& widths);

  int64_t tiles() const { return count_; }

  // The next tile for a free worker; false when none is waiting to be handed out now.
  bool take(tile* t);
  // The same for a worker that holds no tile: while none is waiting but other workers still
  // hold some, it waits, since a worker that fails gives its tile back; false once every tile
  // is finished or left over (no worker holds one). So surviving workers, not the CPU BLAS,
  // take the tiles of a failed one.
  bool take_or_wait(tile* t);
  // The worker finished t: its columns of C hold the result.
  void done(const tile& t);
  // The worker could not finish t: its first `columns_done` columns (whole columns, 0 ..
  // t.width) hold their final values, the others were not written. The rest of t goes back to
  // the front of the queue for another worker (as a narrower tile: t's columns already final
  // must not be computed again, since C = alpha A B + beta C reads them); all of it done counts
  // as done(t). The worker must not take more tiles.
  void give_back(const tile& t, int64_t columns_done = 0);

  // After every worker has stopped: what was never finished, left to right (a tile given back
  // part way appears as its unfinished columns).
  std::vector<tile> unfinished() const;
  // The same into *out (cleared first), allocating nothing when its capacity is tiles(): for
  // callers that must not fail once C is partly written.
  void unfinished_into(std::vector<tile>* out) const;
  int64_t finished() const;

 private:
  tile make(int64_t index) const;
  void check(const tile& t) const;

  int64_t count_;
  std::vector<int64_t> start_, width_;  // per tile, as planned
  mutable std::mutex mutex_;
  std::condition_variable changed_;  // a tile given back or finished
  std::deque<int64_t> pending_;
  int64_t held_ = 0;  // tiles taken and neither finished nor given back
  std::vector<bool> done_;
  std::vector<int64_t> skip_;  // per tile: leading columns already final (a partial give-back)
  int64_t finished_ = 0;
};

// The widths of C's column tiles, left to right, for a call of n columns split among `workers`
// workers. `configured` > 0 (OZDGEMM_HOST_TILE): tiles of that many columns. Otherwise tiles of
// at least 2048 columns (multiples of 256), max(8, 4 x workers) of them: narrower tiles cost more
// in per-tile GEMM efficiency and launch overhead than they gain in overlap (measured on the
// H200, s = 16, bench/results/probes/README.md: n = 8192 took 42.7 / 47.7 / 60.9 ms with tiles of
// 2048 / 1024 / 512 columns, n = 16384 175 / 175 / 223 ms). One worker gets equal tiles, as
// measured. Several workers get the same tiles until fewer than two per worker are left; then
// each tile is (columns left) / (2 x workers), at least kMinTailTile columns, so that the
// workers finish within a narrow tile of each other whatever their speeds (guided
// self-scheduling). n >= 0, workers >= 1; empty for n = 0.
inline constexpr int64_t kMinTailTile = 1024;
std::vector<int64_t> plan_tiles(int64_t n, int workers, long long configured);

// Column ranges [j0, j0 + count) of C, left to right.
struct column_range {
  int64_t j0, count;
};

// The unfinished tiles as column ranges, adjacent ones merged: what the CPU BLAS must compute.
std::vector<column_range> merge_columns(const std::vector<tile_queue::tile>& tiles);
// The same into *out (cleared first), allocating nothing when its capacity is tiles.size().
void merge_columns_into(const std::vector<tile_queue::tile>& tiles,
                        std::vector<column_range>* out);

}  // namespace ozdgemm::detail
