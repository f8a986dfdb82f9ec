#include "engine/speculation.hpp"

#include <array>
#include <mutex>
#include <vector>

namespace ozdgemm::detail {
namespace {

// Calls in flight per device whose outcome the host can learn; more calls in flight than this
// (a program far ahead of its GPU) run without teaching the history.
constexpr int kSlots = 128;

enum class slot_state : unsigned char { free, reserved, in_flight };

struct pool {
  int device = -1;
  int* values = nullptr;  // mapped, portable host memory; the device sees the same address (UVA)
  std::array<cudaEvent_t, kSlots> events{};
  std::array<slot_state, kSlots> state{};
  std::array<history_key, kSlots> keys{};
};

struct registry {
  std::mutex mutex;
  std::vector<pool*> pools;  // leaked with the registry: calls may come during exit
};

registry& slots() {
  static auto* r = new registry();
  return *r;
}

// The pool of `device`, made on first use (mutex held); null when CUDA cannot make it.
pool* pool_of(registry& r, int device) {
  for (pool* p : r.pools)
    if (p->device == device) return p;
  auto* p = new pool();
  p->device = device;
  bool ok = cudaHostAlloc(reinterpret_cast<void**>(&p->values), sizeof(int) * kSlots,
                          cudaHostAllocMapped | cudaHostAllocPortable) == cudaSuccess;
  for (int i = 0; ok && i < kSlots; ++i)
    ok = cudaEventCreateWithFlags(&p->events[i], cudaEventDisableTiming) == cudaSuccess;
  if (!ok) {
    (void)cudaGetLastError();
    for (cudaEvent_t e : p->events)
      if (e != nullptr) (void)cudaEventDestroy(e);
    if (p->values != nullptr) (void)cudaFreeHost(p->values);
    delete p;
    return nullptr;
  }
  r.pools.push_back(p);
  return p;
}

// The pool and index of `slot` (mutex held), or false.
bool find(registry& r, const int* slot, pool** out, int* index) {
  for (pool* p : r.pools)
    if (slot >= p->values && slot < p->values + kSlots) {
      *out = p;
      *index = static_cast<int>(slot - p->values);
      return true;
    }
  return false;
}

}  // namespace

int* reserve_outcome(const history_key& key) noexcept {
  try {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    registry& r = slots();
    std::lock_guard<std::mutex> lock(r.mutex);
    pool* p = pool_of(r, device);
    if (p == nullptr) return nullptr;
    for (int i = 0; i < kSlots; ++i)
      if (p->state[i] == slot_state::free) {
        p->state[i] = slot_state::reserved;
        p->keys[i] = key;
        p->values[i] = -1;
        return p->values + i;
      }
    return nullptr;
  } catch (...) {
    return nullptr;
  }
}

void commit_outcome(int* slot, cudaStream_t stream) noexcept {
  if (slot == nullptr) return;
  registry& r = slots();
  std::lock_guard<std::mutex> lock(r.mutex);
  pool* p = nullptr;
  int i = 0;
  if (!find(r, slot, &p, &i) || p->state[i] != slot_state::reserved) return;
  if (cudaEventRecord(p->events[i], stream) == cudaSuccess) {
    p->state[i] = slot_state::in_flight;
  } else {
    (void)cudaGetLastError();
    p->state[i] = slot_state::free;
  }
}

void release_outcome(int* slot) noexcept {
  if (slot == nullptr) return;
  registry& r = slots();
  std::lock_guard<std::mutex> lock(r.mutex);
  pool* p = nullptr;
  int i = 0;
  if (find(r, slot, &p, &i) && p->state[i] == slot_state::reserved) p->state[i] = slot_state::free;
}

int harvest_outcomes() noexcept {
  registry& r = slots();
  int learnt = 0;
  try {
    std::lock_guard<std::mutex> lock(r.mutex);
    for (pool* p : r.pools)
      for (int i = 0; i < kSlots; ++i) {
        if (p->state[i] != slot_state::in_flight) continue;
        const cudaError_t q = cudaEventQuery(p->events[i]);
        if (q == cudaErrorNotReady) continue;
        if (q == cudaSuccess) {
          const int s = static_cast<volatile int*>(p->values)[i];
          if (s >= 0) {  // -1: the chooser never ran (the call failed on the way)
            process_moduli_history().record(p->keys[i], s);
            ++learnt;
          }
        } else {
          (void)cudaGetLastError();
        }
        p->state[i] = slot_state::free;
      }
  } catch (...) {
  }
  return learnt;
}

}  // namespace ozdgemm::detail
