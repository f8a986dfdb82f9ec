#include "host_path/tile_queue.hpp"

#include <algorithm>
#include <stdexcept>

namespace ozdgemm::detail {

namespace {

std::vector<int64_t> uniform_widths(int64_t n, int64_t width) {
  if (n < 0 || width < 1) throw std::invalid_argument("tile_queue: n >= 0 and width >= 1");
  std::vector<int64_t> widths;
  for (int64_t j0 = 0; j0 < n; j0 += width) widths.push_back(std::min(width, n - j0));
  return widths;
}

int64_t round_up_to(int64_t x, int64_t q) { return (x + q - 1) / q * q; }

}  // namespace

tile_queue::tile_queue(int64_t n, int64_t width) : tile_queue(uniform_widths(n, width)) {}

tile_queue::tile_queue(const std::vector<int64_t>& widths)
    : count_(static_cast<int64_t>(widths.size())), width_(widths) {
  int64_t j0 = 0;
  for (int64_t w : widths) {
    if (w < 1) throw std::invalid_argument("tile_queue: every tile has at least one column");
    start_.push_back(j0);
    j0 += w;
  }
  done_.assign(static_cast<size_t>(count_), false);
  skip_.assign(static_cast<size_t>(count_), 0);
  for (int64_t i = 0; i < count_; ++i) pending_.push_back(i);
}

tile_queue::tile tile_queue::make(int64_t index) const {
  const size_t i = static_cast<size_t>(index);
  return tile{index, start_[i] + skip_[i], width_[i] - skip_[i]};
}

// t must be a tile as handed out now: known, not finished, and not since shrunk.
void tile_queue::check(const tile& t) const {
  if (t.index < 0 || t.index >= count_ || done_[static_cast<size_t>(t.index)])
    throw std::logic_error("tile_queue: tile finished twice or out of range");
  const tile now = make(t.index);
  if (t.j0 != now.j0 || t.width != now.width)
    throw std::logic_error("tile_queue: a tile that does not match the queue's");
}

bool tile_queue::take(tile* t) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pending_.empty()) return false;
  *t = make(pending_.front());
  pending_.pop_front();
  ++held_;
  return true;
}

bool tile_queue::take_or_wait(tile* t) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !pending_.empty() || held_ == 0; });
  if (pending_.empty()) return false;
  *t = make(pending_.front());
  pending_.pop_front();
  ++held_;
  return true;
}

void tile_queue::done(const tile& t) {
  std::lock_guard<std::mutex> lock(mutex_);
  check(t);
  done_[static_cast<size_t>(t.index)] = true;
  ++finished_;
  --held_;
  changed_.notify_all();
}

void tile_queue::give_back(const tile& t, int64_t columns_done) {
  std::lock_guard<std::mutex> lock(mutex_);
  check(t);
  if (columns_done < 0 || columns_done > t.width)
    throw std::logic_error("tile_queue: more columns done than the tile has");
  --held_;
  if (columns_done == t.width) {
    done_[static_cast<size_t>(t.index)] = true;
    ++finished_;
  } else {
    skip_[static_cast<size_t>(t.index)] += columns_done;
    pending_.push_front(t.index);  // first in line: the columns to its left are likely done
  }
  changed_.notify_all();
}

std::vector<tile_queue::tile> tile_queue::unfinished() const {
  std::vector<tile> left;
  unfinished_into(&left);
  return left;
}

void tile_queue::unfinished_into(std::vector<tile>* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  out->clear();
  for (int64_t i = 0; i < count_; ++i)
    if (!done_[static_cast<size_t>(i)]) out->push_back(make(i));
}

int64_t tile_queue::finished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return finished_;
}

std::vector<int64_t> plan_tiles(int64_t n, int workers, long long configured) {
  if (n < 0 || workers < 1) throw std::invalid_argument("plan_tiles: n >= 0 and workers >= 1");
  if (n == 0) return {};
  if (configured > 0) return uniform_widths(n, std::min<int64_t>(n, configured));
  const int64_t count = std::max<int64_t>(8, int64_t{4} * workers);
  const int64_t base =
      std::min<int64_t>(n, std::max<int64_t>(2048, round_up_to((n + count - 1) / count, 256)));
  if (workers == 1) return uniform_widths(n, base);
  const int64_t tail = std::min(base, kMinTailTile);
  const int64_t shares = int64_t{2} * workers;  // tiles per worker once the tail begins
  std::vector<int64_t> widths;
  for (int64_t left = n; left > 0;) {
    int64_t w = base;
    if (left < shares * base)
      w = std::clamp(round_up_to((left + shares - 1) / shares, 256), tail, base);
    w = std::min(w, left);
    // No sliver after it: a last tile under half the narrowest joins this one, if that keeps
    // the widths from growing.
    if (left - w < tail / 2 && left <= (widths.empty() ? base : widths.back())) w = left;
    widths.push_back(w);
    left -= w;
  }
  return widths;
}

std::vector<column_range> merge_columns(const std::vector<tile_queue::tile>& tiles) {
  std::vector<column_range> ranges;
  merge_columns_into(tiles, &ranges);
  return ranges;
}

void merge_columns_into(const std::vector<tile_queue::tile>& tiles,
                        std::vector<column_range>* out) {
  out->clear();
  for (const tile_queue::tile& t : tiles) {
    if (t.width <= 0) continue;
    if (!out->empty() && out->back().j0 + out->back().count == t.j0)
      out->back().count += t.width;
    else
      out->push_back({t.j0, t.width});
  }
}

}  // namespace ozdgemm::detail
