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

}  // namespace

size_t registration_cache::registered_bytes() const {
  size_t n = 0;
  for (const entry& e : entries_) n += e.end - e.begin;
  return n;
}

std::vector<bool> registration_cache::prepare(const std::vector<byte_range>& ranges) {
  finish();  // a call starts with nothing registered (registrations never outlive a call)
  last_ = {};
  // The call's ranges worth registering, rounded out to pages; those that share a page merged,
  // so that no two registrations overlap (CUDA refuses an overlapping one).
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
  size_t locked = 0;
  for (const byte_range& w : merged) {
    if (locked + w.size() > cap_) {
      ++last_.over_cap;
      continue;
    }
    switch (registrar_->register_range(w.begin, w.size())) {
      case host_registrar::result::registered:
        entries_.push_back(entry{w.begin, w.end});  // merged is sorted: so are the entries
        locked += w.size();
        ++last_.registered;
        break;
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
