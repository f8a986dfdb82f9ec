// Page-locking the caller's matrices (cudaHostRegister) so that the GPUs copy them directly,
// with no CPU copy into pinned staging: OZDGEMM_HOST_REGISTER. This file is the bookkeeping,
// with the registering itself behind an interface (CUDA's in the library, a fake in tests/cpu).
//
// Why it is off by default: pinning ran at 14 GB/s on the H200 host of
// bench/results/probes/README.md, against about 45 GB/s for 16 threads packing into staging, so
// registering for one call costs more than the copies it saves. It pays on hosts where pinning is
// fast.
//
// Registrations never outlive the call. The library cannot see the application free or unmap
// its memory: a registration kept after that would have the GPUs read and write the old pages
// when other memory is later mapped at the same address (seen on an H100: a test program that
// frees its matrices between calls got a wrong C and a failed call). So there is no mode that
// keeps them.
//
// The rules the cache keeps:
// * cudaHostRegister locks whole pages, and a range that overlaps one already registered is
//   refused (cudaErrorHostMemoryAlreadyRegistered). So a call's ranges are rounded out to pages
//   and ranges that share a page are merged into one registration.
// * A range counts as registered (copied directly) only if it lies in one registration of ours:
//   memory the application registered itself, or anything that fails, is staged as before.
// * The registered bytes stay under a cap; a range that would exceed it is staged.
// * Everything is unregistered once the call's copies are done.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ozdgemm::detail {

// Bytes [begin, end) of host memory.
struct byte_range {
  uintptr_t begin = 0, end = 0;
  size_t size() const { return end - begin; }
};

// The bytes of a rows x cols column-major block of doubles with leading dimension ld: from its
// first element to its last. rows, cols >= 1; ld >= rows.
byte_range block_bytes(const double* base, int64_t ld, int64_t rows, int64_t cols);

// Registers and unregisters host memory (page-aligned ranges only).
class host_registrar {
 public:
  enum class result { registered, already_registered, failed };
  virtual ~host_registrar() = default;
  virtual result register_range(uintptr_t begin, size_t bytes) = 0;
  virtual void unregister_range(uintptr_t begin) noexcept = 0;
};

class registration_cache {
 public:
  // page: the registration granularity (a power of two). min_bytes: smaller ranges are not
  // registered (they may still lie in a registration and be copied directly). cap: the most
  // bytes registered at once.
  registration_cache(host_registrar* registrar, size_t page, size_t min_bytes, size_t cap);

  // Before a call's copies: ends what an earlier call left registered, registers what it can of
  // `ranges` (see the file comment) and says for each whether it lies in one registration of
  // ours (copy it directly) or not (stage it).
  std::vector<bool> prepare(const std::vector<byte_range>& ranges);
  // Once no copy of the call is in flight: unregisters everything. Never throws.
  void finish() noexcept;

  size_t registered_bytes() const;
  size_t registrations() const { return entries_.size(); }
  // For the log: what the last prepare() did.
  struct counts {
    int registered = 0, refused = 0, failed = 0, over_cap = 0;
  };
  const counts& last() const { return last_; }

 private:
  struct entry {
    uintptr_t begin, end;
  };
  host_registrar* registrar_;
  size_t page_, min_bytes_, cap_;
  std::vector<entry> entries_;  // this call's registrations: disjoint, sorted by begin
  counts last_;
};

// Registers with cudaHostRegister (portable: every GPU's copies see it as page-locked) and
// unregisters with cudaHostUnregister; a failure is logged at debug and the range staged.
host_registrar& cuda_registrar();

}  // namespace ozdgemm::detail
