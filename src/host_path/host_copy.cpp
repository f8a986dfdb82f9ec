#include "host_path/host_copy.hpp"

#include <algorithm>
#include <cstdint>

#include "common/stream_copy.hpp"

namespace ozdgemm::detail {

copy_pool::copy_pool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker(i); });
}

copy_pool::~copy_pool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void copy_pool::run(int parts, const std::function<void(int)>& body) {
  if (parts <= 0) return;
  if (workers_.empty() || parts == 1) {
    for (int p = 0; p < parts; ++p) body(p);
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  body_ = &body;
  parts_ = parts;
  next_ = 0;
  finished_ = 0;
  ++generation_;
  wake_.notify_all();
  // The calling thread works too, then waits for the parts handed to workers.
  while (next_ < parts_) {
    const int p = next_++;
    lock.unlock();
    body(p);
    lock.lock();
    ++finished_;
  }
  done_.wait(lock, [this] { return finished_ == parts_; });
  body_ = nullptr;
}

void copy_pool::worker(int /*index*/) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || (generation_ != seen && next_ < parts_); });
    if (stop_) return;
    seen = generation_;
    while (body_ != nullptr && next_ < parts_) {
      const int p = next_++;
      const std::function<void(int)>* body = body_;
      lock.unlock();
      (*body)(p);
      lock.lock();
      if (++finished_ == parts_) done_.notify_all();
    }
  }
}

namespace {

// Parts of at least this many elements (4 MiB): smaller ones cost more in hand-off than copy.
constexpr int64_t kMinPart = int64_t{1} << 19;

int part_count(const copy_pool& pool, int64_t count) {
  const int64_t by_size = std::max<int64_t>(1, count / kMinPart);
  return static_cast<int>(std::min<int64_t>(by_size, 4 * pool.threads()));
}

// Calls copy(column-major offset in the block, pointer into the block, run length) for the
// runs of consecutive elements that make up dense elements [first, last) of the block.
template <typename Pointer, typename Copy>
void for_each_run(Pointer base, int64_t ld, int64_t rows, int64_t first, int64_t last,
                  Copy&& copy) {
  int64_t j = first / rows, i = first % rows;
  for (int64_t pos = first; pos < last;) {
    const int64_t len = std::min(rows - i, last - pos);
    copy(pos, base + i + j * ld, len);
    pos += len;
    i = 0;
    ++j;
  }
}

}  // namespace

void pack_range(copy_pool& pool, const host_block& src, int64_t first, int64_t count, double* dst) {
  const int parts = part_count(pool, count);
  pool.run(parts, [&](int p) {
    const int64_t lo = first + count * p / parts, hi = first + count * (p + 1) / parts;
    for_each_run(src.base, src.ld, src.rows, lo, hi, [&](int64_t pos, const double* from, int64_t len) {
      copy_run(dst + (pos - first), from, len);
    });
    store_fence();
  });
}

void unpack_range(copy_pool& pool, const double* src, const host_block& dst, int64_t first,
                  int64_t count) {
  // host_block holds a const pointer because it mostly names inputs; C is the caller's output.
  double* base = const_cast<double*>(dst.base);
  const int parts = part_count(pool, count);
  pool.run(parts, [&](int p) {
    const int64_t lo = first + count * p / parts, hi = first + count * (p + 1) / parts;
    for_each_run(base, dst.ld, dst.rows, lo, hi, [&](int64_t pos, double* to, int64_t len) {
      copy_run(to, src + (pos - first), len);
    });
    store_fence();
  });
}

int host_copy_threads(int configured, int gpus) {
  if (configured > 0) return configured;
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(
      std::clamp<unsigned>(hw, 1, 16u * static_cast<unsigned>(std::max(1, gpus))));
}

}  // namespace ozdgemm::detail
