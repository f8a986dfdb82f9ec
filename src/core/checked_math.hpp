// Overflow-checked size arithmetic. Sizes and leading dimensions come from callers and are
// untrusted: every product that sizes an allocation or bounds an index goes through these,
// before anything is allocated or read. Host only (the kernels receive sizes checked here).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ozdgemm::detail {

// *out = a * b; false (and *out unspecified) when the product overflows T.
template <class T>
inline bool checked_mul(T a, T b, T* out) {
  static_assert(std::is_integral_v<T>, "integers only");
  return !__builtin_mul_overflow(a, b, out);
}

// *out = a + b; false when the sum overflows T.
template <class T>
inline bool checked_add(T a, T b, T* out) {
  static_assert(std::is_integral_v<T>, "integers only");
  return !__builtin_add_overflow(a, b, out);
}

// Bytes of `count` objects of `size` bytes each; false when count < 0 or the total exceeds
// PTRDIFF_MAX (no object, and no std::vector, can be larger).
inline bool checked_bytes(int64_t count, size_t size, size_t* out) {
  if (count < 0) return false;
  size_t bytes = 0;
  if (!checked_mul(static_cast<size_t>(count), size, &bytes)) return false;
  if (bytes > static_cast<size_t>(PTRDIFF_MAX)) return false;
  *out = bytes;
  return true;
}

// Elements spanned by a column-major rows x cols matrix with leading dimension ld:
// (cols - 1) ld + rows, or 0 when it is empty. False when that overflows int64_t or the
// arguments are negative.
inline bool matrix_extent(int64_t rows, int64_t cols, int64_t ld, int64_t* out) {
  if (rows < 0 || cols < 0 || ld < 0) return false;
  if (rows == 0 || cols == 0) {
    *out = 0;
    return true;
  }
  int64_t span = 0;
  if (!checked_mul(cols - 1, ld, &span) || !checked_add(span, rows, &span)) return false;
  *out = span;
  return true;
}

// True when a rows x cols matrix of `element` bytes per entry (a double by default; 16 for
// complex) with leading dimension ld, starting at `p`, lies in the address space: its byte
// extent fits PTRDIFF_MAX and p + extent does not wrap. Arguments that fail this describe no
// memory any caller can own.
inline bool addressable_matrix(const void* p, int64_t rows, int64_t cols, int64_t ld,
                               size_t element = sizeof(double)) {
  int64_t elems = 0;
  size_t bytes = 0;
  if (!matrix_extent(rows, cols, ld, &elems) || !checked_bytes(elems, element, &bytes))
    return false;
  uintptr_t end = 0;
  return checked_add(reinterpret_cast<uintptr_t>(p), static_cast<uintptr_t>(bytes), &end);
}

// *out = p advanced by index * stride elements of `element` bytes (stride may be negative or
// 0): the i-th matrix of a strided batch. False when the offset overflows int64_t or the
// address wraps; such a batch describes no memory any caller can own.
inline bool strided_element(const void* p, int64_t index, int64_t stride, size_t element,
                            const void** out) {
  int64_t elems = 0, bytes = 0;
  if (!checked_mul(index, stride, &elems) ||
      !checked_mul(elems, static_cast<int64_t>(element), &bytes))
    return false;
  const uintptr_t base = reinterpret_cast<uintptr_t>(p);
  uintptr_t at = 0;
  if (bytes >= 0) {
    if (!checked_add(base, static_cast<uintptr_t>(bytes), &at)) return false;
  } else {
    const uintptr_t back = static_cast<uintptr_t>(-(bytes + 1)) + 1;  // |bytes|, INT64_MIN too
    if (base < back) return false;
    at = base - back;
  }
  *out = reinterpret_cast<const void*>(at);
  return true;
}

}  // namespace ozdgemm::detail
