#include "engine/moduli_history.hpp"

#include <algorithm>
#include <functional>

namespace ozdgemm::detail {

size_t moduli_history::key_hash::operator()(const history_key& k) const noexcept {
  size_t h = std::hash<int64_t>{}(k.m);
  for (const int64_t v :
       {k.n, k.k, static_cast<int64_t>(k.complex) * 2 + static_cast<int64_t>(k.mode),
        static_cast<int64_t>(k.target)})
    h = h * 1000003u ^ std::hash<int64_t>{}(v);
  return h;
}

moduli_history::entry& moduli_history::slot(const history_key& key) {
  auto it = shapes_.find(key);
  if (it == shapes_.end()) {
    if (shapes_.size() >= kMaxShapes)
      shapes_.erase(std::min_element(
          shapes_.begin(), shapes_.end(),
          [](const auto& a, const auto& b) { return a.second.used < b.second.used; }));
    it = shapes_.emplace(key, entry{}).first;
  }
  it->second.used = ++clock_;
  return it->second;
}

namespace {

// The tally of a ring of outcomes that has received `recorded` of them.
template <size_t N>
count_tally tally_of(const std::array<uint8_t, N>& last, uint32_t recorded) {
  count_tally t;
  t.total = std::min<uint32_t>(recorded, N);
  for (uint32_t i = 0; i < t.total; ++i) ++t.counts[last[i]];
  return t;
}

size_t family_index(const history_key& k) {
  return (k.complex ? 2 : 0) + (k.mode == scaling_mode::accurate ? 1 : 0);
}

}  // namespace

moduli_outlook moduli_history::lookup(const history_key& key) { return outlook(key, true); }
moduli_outlook moduli_history::peek(const history_key& key) { return outlook(key, false); }

moduli_outlook moduli_history::outlook(const history_key& key, bool counts) {
  std::lock_guard<std::mutex> lock(mutex_);
  moduli_outlook o;
  const family_ring& f = families_[family_index(key)];
  o.family = tally_of(f.last, f.recorded);
  const auto it = shapes_.find(key);
  if (it == shapes_.end()) return o;  // a shape never chosen for is not stored by a lookup
  entry& e = it->second;
  o.shape = tally_of(e.last, e.recorded);
  if (!counts) {
    o.decided_since = e.decided_since + 1;  // what lookup would return
    return o;
  }
  e.used = ++clock_;
  o.decided_since = ++e.decided_since;
  return o;
}

void moduli_history::record(const history_key& key, int s) {
  if (s != 0 && (s < kMinModuli || s > kMaxModuli)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  entry& e = slot(key);
  e.last[e.recorded % kWindow] = static_cast<uint8_t>(s);
  ++e.recorded;
  e.decided_since = 0;
  e.native_calls = 0;
  family_ring& f = families_[family_index(key)];
  f.last[f.recorded % kFamilyWindow] = static_cast<uint8_t>(s);
  ++f.recorded;
}

speculation moduli_history::speculate(const history_key& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  speculation sp;
  const auto it = shapes_.find(key);
  if (it == shapes_.end() || it->second.recorded == 0) return sp;
  entry& e = it->second;
  e.used = ++clock_;
  const uint32_t held = std::min<uint32_t>(e.recorded, kWindow);
  if (e.last[(e.recorded - 1) % kWindow] == 0) {
    sp.native = true;
    sp.probe = ++e.native_calls % kProbeEvery == 0;
    return sp;
  }
  for (uint32_t i = 0; i < held; ++i) sp.launch = std::max<int>(sp.launch, e.last[i]);
  return sp;
}

size_t moduli_history::shapes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return shapes_.size();
}

void moduli_history::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  shapes_.clear();
  families_ = {};
}

moduli_history& process_moduli_history() {
  static auto* h = new moduli_history();
  return *h;
}

}  // namespace ozdgemm::detail
