// How a call's moduli count is decided: a fixed s, or per call from the data (auto: the model
// of core/moduli_choice.hpp; certified: the proven per-element bound of
// core/certified_bound.hpp). One value type, so that no layer encodes the per-call choices as
// sentinel counts.
#pragma once

#include "core/moduli.hpp"

namespace ozdgemm::detail {

class moduli_setting {
 public:
  enum class kind { fixed, automatic, certified };

  // No count yet (valid() is false): a value to be assigned before use.
  constexpr moduli_setting() : kind_(kind::fixed), s_(0) {}

  // s in [kMinModuli, kMaxModuli]; callers check the range (valid()).
  static constexpr moduli_setting fixed(int s) { return moduli_setting(kind::fixed, s); }
  static constexpr moduli_setting automatic() { return moduli_setting(kind::automatic, 0); }
  static constexpr moduli_setting certified() { return moduli_setting(kind::certified, 0); }

  constexpr kind how() const { return kind_; }
  constexpr bool is_fixed() const { return kind_ == kind::fixed; }
  constexpr bool chooses_per_call() const { return kind_ != kind::fixed; }
  constexpr bool is_certified() const { return kind_ == kind::certified; }
  // The fixed s; 0 when s is chosen per call.
  constexpr int count() const { return s_; }
  // The moduli count the workspace is laid out for: a per-call choice may pick any s up to
  // kMaxModuli after the scaling pass, whose results must stay where they are.
  constexpr int layout_count() const { return is_fixed() ? s_ : kMaxModuli; }
  constexpr bool valid() const { return !is_fixed() || (s_ >= kMinModuli && s_ <= kMaxModuli); }

  friend constexpr bool operator==(moduli_setting a, moduli_setting b) {
    return a.kind_ == b.kind_ && a.s_ == b.s_;
  }
  friend constexpr bool operator!=(moduli_setting a, moduli_setting b) { return !(a == b); }

 private:
  constexpr moduli_setting(kind k, int s) : kind_(k), s_(s) {}
  kind kind_;
  int s_;
};

}  // namespace ozdgemm::detail
