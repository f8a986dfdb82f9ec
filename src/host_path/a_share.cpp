#include "host_path/a_share.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "common/device_guard.hpp"
#include "common/logging.hpp"

namespace ozdgemm::detail {

int a_share_plan::owned(int w) const {
  int n = 0;
  for (int g = 0; g < segments.count; ++g) n += owns(w, g) ? 1 : 0;
  return n;
}

a_share_plan plan_a_share(const std::vector<int>& devices, int64_t cols,
                          const std::function<bool(int, int)>& linked, bool share) {
  const int workers = static_cast<int>(devices.size());
  if (workers < 1 || cols < 0) throw std::invalid_argument("plan_a_share: no workers");
  // Groups of workers whose GPUs are linked pairwise, greedily in crew order.
  std::vector<std::vector<int>> groups;
  for (int w = 0; w < workers; ++w) {
    std::vector<int>* home = nullptr;
    if (share && workers > 1)
      for (std::vector<int>& grp : groups)
        if (std::all_of(grp.begin(), grp.end(), [&](int v) {
              const int a = devices[static_cast<size_t>(w)], b = devices[static_cast<size_t>(v)];
              return a == b || (linked(a, b) && linked(b, a));
            })) {
          home = &grp;
          break;
        }
    if (home != nullptr)
      home->push_back(w);
    else
      groups.push_back({w});
  }
  size_t largest = 1;
  for (const std::vector<int>& grp : groups) largest = std::max(largest, grp.size());
  a_share_plan plan;
  plan.segments.cols = cols;
  plan.segments.count =
      largest == 1
          ? 1
          : static_cast<int>(std::max<int64_t>(
                1, std::min<int64_t>(cols, kSegmentsPerWorker * static_cast<int64_t>(largest))));
  plan.source.assign(static_cast<size_t>(workers),
                     std::vector<int>(static_cast<size_t>(plan.segments.count), 0));
  for (const std::vector<int>& grp : groups)
    for (int g = 0; g < plan.segments.count; ++g) {
      const int owner = grp[static_cast<size_t>(g) % grp.size()];
      for (int w : grp) plan.source[static_cast<size_t>(w)][static_cast<size_t>(g)] = owner;
    }
  return plan;
}

a_share_state::a_share_state(int workers, int segments)
    : segments_(segments),
      published_(static_cast<size_t>(workers) * static_cast<size_t>(segments), 0),
      verified_(static_cast<size_t>(workers), 0),
      retired_(static_cast<size_t>(workers), 0) {}

void a_share_state::published(int w, int g) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    published_[static_cast<size_t>(w) * static_cast<size_t>(segments_) + static_cast<size_t>(g)] =
        1;
  }
  changed_.notify_all();
}

void a_share_state::verified(int w) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    verified_[static_cast<size_t>(w)] = 1;
  }
  changed_.notify_all();
}

void a_share_state::retired(int w) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    retired_[static_cast<size_t>(w)] = 1;
  }
  changed_.notify_all();
}

bool a_share_state::wait_published(int w, int g) {
  const size_t i = static_cast<size_t>(w) * static_cast<size_t>(segments_) + static_cast<size_t>(g);
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return published_[i] != 0 || retired_[static_cast<size_t>(w)] != 0; });
  return published_[i] != 0;
}

bool a_share_state::wait_verified(int w) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] {
    return verified_[static_cast<size_t>(w)] != 0 || retired_[static_cast<size_t>(w)] != 0;
  });
  return verified_[static_cast<size_t>(w)] != 0;
}

bool peer_links::linked(int a, int b) {
  if (a == b) return true;
  std::lock_guard<std::mutex> lock(mutex_);
  const std::pair<int, int> key{std::min(a, b), std::max(a, b)};
  auto it = known_.find(key);
  if (it != known_.end()) return it->second;
  bool ok = ops_.can_access(a, b) && ops_.can_access(b, a);
  if (ok) ok = ops_.enable(a, b) != enable_result::failed;
  if (ok) ok = ops_.enable(b, a) != enable_result::failed;
  known_.emplace(key, ok);
  return ok;
}

namespace {

bool cuda_can_access(int from, int to) {
  int yes = 0;
  if (cudaDeviceCanAccessPeer(&yes, from, to) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return yes != 0;
}

peer_links::enable_result cuda_enable(int from, int to) {
  try {
    device_guard guard(from);
    const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
    if (e == cudaSuccess) return peer_links::enable_result::enabled;
    (void)cudaGetLastError();  // not sticky; keep later launch checks clean
    if (e == cudaErrorPeerAccessAlreadyEnabled) return peer_links::enable_result::already_enabled;
    log_nothrow(spdlog::level::debug,
                "host path: GPU {} cannot enable peer access to GPU {} ({}): their workers pack "
                "A each",
                from, to, cudaGetErrorString(e));
  } catch (const std::exception& e) {
    log_nothrow(spdlog::level::debug, "host path: peer access {} -> {}: {}", from, to, e.what());
  }
  return peer_links::enable_result::failed;
}

}  // namespace

peer_links& process_peer_links() {
  static auto* links = new peer_links(peer_links::operations{cuda_can_access, cuda_enable});
  return *links;
}

}  // namespace ozdgemm::detail
