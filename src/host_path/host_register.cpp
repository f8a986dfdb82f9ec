#include "host_path/host_register.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "common/logging.hpp"

namespace ozdgemm::detail {

byte_range block_bytes(const double* base, int64_t ld, int64_t rows, int64_t cols) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(base);
  const uint64_t elements =
      static_cast<uint64_t>(cols - 1) * static_cast<uint64_t>(ld) + static_cast<uint64_t>(rows);
  return {begin, begin + elements * sizeof(double)};
}

registration_cache::registration_cache(host_registrar* registrar, size_t page, size_t min_bytes,
                                       size_t cap)
    : registrar_(registrar), page_(page), min_bytes_(min_bytes), cap_(cap) {
  if (registrar == nullptr || page == 0 || (page & (page - 1)) != 0)
    throw std::invalid_argument("registration_cache: a registrar and a power-of-two page");
}

namespace {

byte_range round_out(const byte_range& r, size_t page) {
  const uintptr_t mask = ~static_cast<uintptr_t>(page - 1);
  return {r.begin & mask, (r.end + page - 1) & mask};
}

bool overlap(uintptr_t b0, uintptr_t e0, uintptr_t b1, uintptr_t e1) { return b0 < e1 && b1 < e0; }

}  // namespace

size_t registration_cache::registered_bytes() const {
  size_t n = 0;
  for (const entry& e : entries_) n += e.end - e.begin;
  return n;
}

bool registration_cache::contained(const byte_range& r) const {
  for (const entry& e : entries_)
    if (e.begin <= r.begin && r.end <= e.end) return true;
  return false;
}

std::vector<bool> registration_cache::prepare(const std::vector<byte_range>& ranges) {
  last_ = {};
  // The call's ranges worth registering, rounded out to pages; those that share a page merged.
  std::vector<byte_range> want;
  for (const byte_range& r : ranges)
    if (r.end > r.begin && r.size() >= min_bytes_) want.push_back(round_out(r, page_));
  std::sort(want.begin(), want.end(),
            [](const byte_range& x, const byte_range& y) { return x.begin < y.begin; });
  std::vector<byte_range> merged;
  for (const byte_range& r : want) {
    if (!merged.empty() && r.begin < merged.back().end)
      merged.back().end = std::max(merged.back().end, r.end);
    else
      merged.push_back(r);
  }
  for (const byte_range& w : merged) {
    if (contained(w)) {
      ++last_.reused;
      continue;
    }
    // One registration for w and every registration of ours it overlaps (entries are disjoint
    // and sorted, so one pass finds them all).
    byte_range t = w;
    size_t overlapped = 0;
    for (const entry& e : entries_)
      if (overlap(e.begin, e.end, t.begin, t.end)) {
        t.begin = std::min(t.begin, e.begin);
        t.end = std::max(t.end, e.end);
        overlapped += e.end - e.begin;
      }
    if (t.size() > cap_) {
      ++last_.over_cap;
      continue;
    }
    if (registered_bytes() - overlapped + t.size() > cap_) {
      ++last_.over_cap;
      continue;
    }
    // The overlapped registrations are this call's own, made before any copy: they can go.
    for (size_t i = entries_.size(); i-- > 0;)
      if (overlap(entries_[i].begin, entries_[i].end, t.begin, t.end)) {
        registrar_->unregister_range(entries_[i].begin);
        entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
      }
    switch (registrar_->register_range(t.begin, t.size())) {
      case host_registrar::result::registered: {
        const auto at = std::lower_bound(entries_.begin(), entries_.end(), t.begin,
                                         [](const entry& e, uintptr_t b) { return e.begin < b; });
        entries_.insert(at, entry{t.begin, t.end});
        ++last_.registered;
        break;
      }
      case host_registrar::result::already_registered:
        ++last_.refused;  // the application's own registration: staged
        break;
      case host_registrar::result::failed:
        ++last_.failed;
        break;
    }
  }
  std::vector<bool> direct;
  direct.reserve(ranges.size());
  for (const byte_range& r : ranges) {
    const byte_range p = round_out(r, page_);
    bool in = false;
    if (r.end > r.begin)
      for (const entry& e : entries_)
        if (e.begin <= p.begin && p.end <= e.end) {
          in = true;
          break;
        }
    direct.push_back(in);
  }
  return direct;
}

void registration_cache::finish() noexcept {
  for (const entry& e : entries_) registrar_->unregister_range(e.begin);
  entries_.clear();
}

namespace {

// The ranges are kept as integers for their arithmetic; CUDA takes them back as pointers.
// NOLINTBEGIN(performance-no-int-to-ptr)
class cuda_host_registrar final : public host_registrar {
 public:
  result register_range(uintptr_t begin, size_t bytes) override {
    const cudaError_t e =
        cudaHostRegister(reinterpret_cast<void*>(begin), bytes, cudaHostRegisterPortable);
    if (e == cudaSuccess) return result::registered;
    (void)cudaGetLastError();  // not sticky; keep later launch checks clean
    log_nothrow(spdlog::level::debug,
                "host path: cudaHostRegister of {} MiB failed ({}); that memory is staged",
                bytes >> 20, cudaGetErrorString(e));
    return e == cudaErrorHostMemoryAlreadyRegistered ? result::already_registered : result::failed;
  }
  void unregister_range(uintptr_t begin) noexcept override {
    const cudaError_t e = cudaHostUnregister(reinterpret_cast<void*>(begin));
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      log_nothrow(spdlog::level::debug, "host path: cudaHostUnregister failed ({})",
                  cudaGetErrorString(e));
    }
  }
};
// NOLINTEND(performance-no-int-to-ptr)

}  // namespace

host_registrar& cuda_registrar() {
  static auto* r = new cuda_host_registrar();  // leaked: no CUDA from static destructors
  return *r;
}

}  // namespace ozdgemm::detail
