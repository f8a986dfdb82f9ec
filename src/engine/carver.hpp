// The workspace carver of the engine's layouts (engine/layout.cpp, engine/batched_emulate.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/checked_math.hpp"

namespace ozdgemm::detail {

// Carves typed, 256-byte aligned arrays out of one buffer; with a null base it only sizes.
// Every size is checked (core/checked_math.hpp): on overflow ok() turns false and the
// pointers handed out are meaningless; the layouts' callers check it before any use.
class carver {
 public:
  explicit carver(void* base) : base_(static_cast<char*>(base)) {}
  // a * b * c * d elements, or 0 (and !ok()) when the product overflows.
  int64_t count(int64_t a, int64_t b, int64_t c = 1, int64_t d = 1) {
    int64_t r = 0;
    if (!checked_mul(a, b, &r) || !checked_mul(r, c, &r) || !checked_mul(r, d, &r)) {
      ok_ = false;
      return 0;
    }
    return r;
  }
  template <class T>
  T* take(int64_t count) {
    size_t bytes = 0, aligned = 0, end = 0;
    if (!checked_add(offset_, size_t{255}, &aligned) || !checked_bytes(count, sizeof(T), &bytes) ||
        !checked_add(aligned / 256 * 256, bytes, &end) || end > static_cast<size_t>(PTRDIFF_MAX)) {
      ok_ = false;
      return nullptr;
    }
    offset_ = aligned / 256 * 256;
    T* p = base_ == nullptr ? nullptr : reinterpret_cast<T*>(base_ + offset_);
    offset_ = end;
    return p;
  }
  size_t used() const { return offset_; }
  // The offset the next take() will get.
  size_t align() {
    offset_ = (offset_ + 255) / 256 * 256;
    return offset_;
  }
  bool ok() const { return ok_; }

 private:
  char* base_;
  size_t offset_ = 0;
  bool ok_ = true;
};

}  // namespace ozdgemm::detail
