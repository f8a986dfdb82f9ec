#include "interpose/tile_queue.hpp"

#include <algorithm>
#include <stdexcept>

namespace ozdgemm::detail {

tile_queue::tile_queue(int64_t n, int64_t width)
    : n_(n), width_(width), count_(n > 0 && width > 0 ? (n + width - 1) / width : 0) {
  if (n < 0 || width < 1) throw std::invalid_argument("tile_queue: n >= 0 and width >= 1");
  done_.assign(static_cast<size_t>(count_), false);
  for (int64_t i = 0; i < count_; ++i) pending_.push_back(i);
}

tile_queue::tile tile_queue::make(int64_t index) const {
  const int64_t j0 = index * width_;
  return tile{index, j0, std::min(width_, n_ - j0)};
}

bool tile_queue::take(tile* t) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pending_.empty()) return false;
  *t = make(pending_.front());
  pending_.pop_front();
  return true;
}

void tile_queue::done(const tile& t) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (t.index < 0 || t.index >= count_ || done_[static_cast<size_t>(t.index)])
    throw std::logic_error("tile_queue: tile finished twice or out of range");
  done_[static_cast<size_t>(t.index)] = true;
  ++finished_;
}

void tile_queue::give_back(const tile& t) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (t.index < 0 || t.index >= count_ || done_[static_cast<size_t>(t.index)])
    throw std::logic_error("tile_queue: a finished or unknown tile given back");
  pending_.push_front(t.index);  // first in line: the columns to its left are likely done
}

std::vector<tile_queue::tile> tile_queue::unfinished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<tile> left;
  for (int64_t i = 0; i < count_; ++i)
    if (!done_[static_cast<size_t>(i)]) left.push_back(make(i));
  return left;
}

int64_t tile_queue::finished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return finished_;
}

}  // namespace ozdgemm::detail
