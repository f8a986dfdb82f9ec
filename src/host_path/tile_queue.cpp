#include "host_path/tile_queue.hpp"

#include <algorithm>
#include <stdexcept>

namespace ozdgemm::detail {

tile_queue::tile_queue(int64_t n, int64_t width)
    : n_(n), width_(width), count_(n > 0 && width > 0 ? (n + width - 1) / width : 0) {
  if (n < 0 || width < 1) throw std::invalid_argument("tile_queue: n >= 0 and width >= 1");
  done_.assign(static_cast<size_t>(count_), false);
  skip_.assign(static_cast<size_t>(count_), 0);
  for (int64_t i = 0; i < count_; ++i) pending_.push_back(i);
}

tile_queue::tile tile_queue::make(int64_t index) const {
  const int64_t j0 = index * width_, skip = skip_[static_cast<size_t>(index)];
  return tile{index, j0 + skip, std::min(width_, n_ - j0) - skip};
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
