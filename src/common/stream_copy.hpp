// A copy of doubles with non-temporal stores, for destinations the host does not read again
// soon (the host path's pinned staging buffers and the caller's C; the transfer probe measures
// the same loop). Shared by src/host_path/host_copy.cpp and bench/probes/host_transfer_probe.cu.
#pragma once

#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ozdgemm::detail {

// Copies with non-temporal stores where the platform has them: skipping the cache's
// read-for-ownership measured 10-15% faster with 16 threads on the H200 machine's Xeon
// (bench/results/probes/README.md: 48 vs 44 GB/s pack, 47 vs 41 unpack).
// Short runs (< 1024 elements) use memcpy. Call store_fence() before the data counts as written.
inline void copy_run(double* dst, const double* src, int64_t n) {
#if defined(__SSE2__)
  if (n >= 1024) {
    int64_t i = 0;
    for (; i < n && (reinterpret_cast<uintptr_t>(dst + i) & 15) != 0; ++i) dst[i] = src[i];
    for (; i + 8 <= n; i += 8) {
      _mm_stream_pd(dst + i, _mm_loadu_pd(src + i));
      _mm_stream_pd(dst + i + 2, _mm_loadu_pd(src + i + 2));
      _mm_stream_pd(dst + i + 4, _mm_loadu_pd(src + i + 4));
      _mm_stream_pd(dst + i + 6, _mm_loadu_pd(src + i + 6));
    }
    for (; i < n; ++i) dst[i] = src[i];
    return;
  }
#endif
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(double));
}

// Non-temporal stores are weakly ordered: fence them before the part counts as done (and
// before a DMA reads the staging buffer).
inline void store_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace ozdgemm::detail
