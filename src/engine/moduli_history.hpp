// What the per-call choices of the moduli count (auto, certified) returned for each shape: the
// counts auto mode's performance model prices for the next call of that shape, in place of a
// fixed estimate. The count is a property of the data; a program that multiplies one shape
// again mostly multiplies data of the same kind, so the recent outcomes of a shape predict its
// next one. Process-wide, thread-safe, bounded.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "core/moduli.hpp"
#include "core/scaling_rules.hpp"

namespace ozdgemm::detail {

// Recent outcomes of choices: counts[s] chose s (2..20), counts[0] found no s <= 20 that meets
// the target.
struct count_tally {
  std::array<uint32_t, kMaxModuli + 1> counts{};
  uint32_t total = 0;
};

// What the model prices a call's choice at: the recent outcomes of its shape, and those of every
// shape of its routine family and scaling (a program's data mostly keeps its character from one
// shape to the next), both empty before the first choice.
struct moduli_outlook {
  count_tally shape, family;
  // Calls of the shape decided since its last recorded outcome (the retry rule of decision.cpp).
  uint32_t decided_since = 0;
  // Set by the caller: the call's choice runs on the host, which learns its count and applies
  // auto mode's gate. A count chosen in graph conditionals (under capture) runs as
  // chosen and is never learnt, so such a call is not tried on a hunch (decision.hpp).
  bool host_choice = true;
};

// One shape of one routine family: complex calls meet a tighter target than real ones
// (core/complex_embedding.hpp), so their counts are kept apart.
// target: the call's accuracy setting as ozdgemm_options_t::accuracy spells it (another target,
// other counts).
struct history_key {
  int64_t m, n, k;
  bool complex;
  scaling_mode mode;
  int target = 0;
  bool operator==(const history_key& o) const {
    return m == o.m && n == o.n && k == o.k && complex == o.complex && mode == o.mode &&
           target == o.target;
  }
};

// The key of a call of op(A) m x k by op(B) k x n: a complex call is kept under its embedding's
// real shape (m, 2n, 2k), the problem auto mode prices.
inline history_key key_of_call(int64_t m, int64_t n, int64_t k, bool complex, scaling_mode mode,
                               int target) {
  return complex ? history_key{m, 2 * n, 2 * k, true, mode, target}
                 : history_key{m, n, k, false, mode, target};
}

// What an eager certified call of a shape launches before its own certificate is known
// (engine/speculation.hpp).
struct speculation {
  // > 0: the INT8 GEMMs of this count, the largest of the shape's recent counts; 0: the shape has
  // no outcome yet, or its latest found no count (see native).
  int launch = 0;
  // The shape's latest outcome found no count: the call runs native, and every kProbeEvery-th
  // such call also certifies its data on the GPU beside the native routine (probe), so that a
  // shape whose data became easier is emulated again.
  bool native = false;
  bool probe = false;
};

class moduli_history {
 public:
  // How many outcomes a shape keeps (the latest), how many a family keeps, and how many shapes
  // the history holds: a new shape beyond that replaces the one least recently looked up.
  static constexpr int kWindow = 8;
  static constexpr int kFamilyWindow = 16;
  static constexpr size_t kMaxShapes = 512;

  // The shape's and its family's recent outcomes, and one more decided call counted since the
  // shape's last outcome.
  moduli_outlook lookup(const history_key& key);
  // The same outcomes, with no call counted: for a question that runs nothing.
  moduli_outlook peek(const history_key& key);
  // One outcome of the shape's choice: s in [kMinModuli, kMaxModuli], or 0 when no s met the
  // target. Anything else (a count chosen on the GPU, which the host does not learn) is ignored.
  void record(const history_key& key, int s);
  // What the shape's next eager certified call launches (struct speculation); counts the call.
  speculation speculate(const history_key& key);
  static constexpr uint32_t kProbeEvery = 8;
  size_t shapes();
  // Forgets every shape and family, as in a process that has made no call (tests whose bits
  // must not depend on what ran before them in the same process).
  void clear();

 private:
  moduli_outlook outlook(const history_key& key, bool counts);

  struct entry {
    std::array<uint8_t, kWindow> last{};  // ring of outcomes
    uint32_t recorded = 0;                // outcomes ever recorded (the ring holds the latest)
    uint32_t decided_since = 0;
    uint32_t native_calls = 0;  // speculate() calls since the last outcome
    uint64_t used = 0;          // the clock_ of its latest lookup or record
  };
  struct key_hash {
    size_t operator()(const history_key& k) const noexcept;
  };
  entry& slot(const history_key& key);  // mutex_ held

  std::mutex mutex_;
  std::unordered_map<history_key, entry, key_hash> shapes_;
  struct family_ring {
    std::array<uint8_t, kFamilyWindow> last{};
    uint32_t recorded = 0;
  };
  std::array<family_ring, 4> families_{};  // [complex][scaling mode]
  uint64_t clock_ = 0;
};

// The process's history (leaked, like the rest of the process state: calls may come during exit).
moduli_history& process_moduli_history();

}  // namespace ozdgemm::detail
