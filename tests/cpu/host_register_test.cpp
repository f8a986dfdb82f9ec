// The bookkeeping of OZDGEMM_HOST_REGISTER (src/host_path/host_register.hpp) against a fake
// registrar that behaves as CUDA's: whole pages only, a range overlapping a registration is
// refused as already registered (ours or the application's), some memory cannot be registered.
#include "host_path/host_register.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "dispatch/settings.hpp"

namespace {

using namespace ozdgemm::detail;

constexpr size_t kPage = 4096;
constexpr size_t kMiB = size_t{1} << 20;

class fake_registrar final : public host_registrar {
 public:
  result register_range(uintptr_t begin, size_t bytes) override {
    ++calls;
    EXPECT_EQ(begin % kPage, 0u) << "whole pages only";
    EXPECT_EQ(bytes % kPage, 0u) << "whole pages only";
    const uintptr_t end = begin + bytes;
    for (const auto& [b, e] : foreign)
      if (b < end && begin < e) return result::already_registered;
    for (const auto& [b, e] : ours) {
      EXPECT_FALSE(b < end && begin < e) << "the cache registered over its own registration";
      if (b < end && begin < e) return result::already_registered;
    }
    for (const auto& [b, e] : unpinnable)
      if (b < end && begin < e) return result::failed;
    ours[begin] = end;
    return result::registered;
  }
  void unregister_range(uintptr_t begin) noexcept override {
    ++unregisters;
    EXPECT_EQ(ours.erase(begin), 1u) << "unregistered what was not registered";
  }
  size_t bytes() const {
    size_t n = 0;
    for (const auto& [b, e] : ours) n += e - b;
    return n;
  }
  std::map<uintptr_t, uintptr_t> ours, foreign, unpinnable;
  int calls = 0, unregisters = 0;
};

// Addresses are only numbers here: nothing is dereferenced.
byte_range at(uintptr_t begin, size_t bytes) { return {begin, begin + bytes}; }
constexpr uintptr_t kBase = uintptr_t{1} << 40;

TEST(HostRegister, ParsesModesAndCaps) {
  register_setting s;
  EXPECT_TRUE(parse_register_setting("off", &s));
  EXPECT_EQ(s.mode, register_mode::off);
  EXPECT_TRUE(parse_register_setting("call", &s));
  EXPECT_EQ(s.mode, register_mode::call);
  EXPECT_EQ(s.cap, 0u);
  EXPECT_TRUE(parse_register_setting("call:64G", &s));
  EXPECT_EQ(s.mode, register_mode::call);
  EXPECT_EQ(s.cap, size_t{64} << 30);
  EXPECT_TRUE(parse_register_setting("call:1048576", &s));
  EXPECT_EQ(s.cap, kMiB);
  // keep: registrations may not outlive the call (src/host_path/host_register.hpp).
  for (const char* bad : {"", "on", "keep", "keep:64G", "call:", "call:0", "call:12X", "call:-1",
                          "Call", "call:100", "call:99999999999999999999G", "off:1G:2"}) {
    register_setting before{register_mode::call, 7};
    EXPECT_FALSE(parse_register_setting(bad, &before)) << bad;
    EXPECT_EQ(before.cap, 7u) << "left alone on " << bad;
  }
}

TEST(HostRegister, BlockBytesRunFromTheFirstElementToTheLast) {
  const double* base = reinterpret_cast<const double*>(kBase);  // NOLINT: never dereferenced
  const byte_range r = block_bytes(base, 100, 30, 5);
  EXPECT_EQ(r.begin, kBase);
  EXPECT_EQ(r.size(), (4 * 100 + 30) * sizeof(double));
  EXPECT_EQ(block_bytes(base, 7, 7, 1).size(), 56u);
}

// `call`: the call's large ranges are registered once, whole pages, and all unregistered by
// finish(); small ones are staged.
TEST(HostRegister, CallModeRegistersForTheCallOnly) {
  fake_registrar fake;
  registration_cache cache(&fake, kPage, 64 * kMiB, size_t{1} << 40);
  const byte_range a = at(kBase + 100, 100 * kMiB), small = at(kBase + (1ull << 32), kMiB);
  const std::vector<bool> direct = cache.prepare({a, small});
  EXPECT_EQ(direct, (std::vector<bool>{true, false}));
  EXPECT_EQ(fake.ours.size(), 1u);
  EXPECT_EQ(fake.ours.begin()->first, kBase) << "rounded down to its page";
  EXPECT_EQ(fake.ours.begin()->second, kBase + 100 * kMiB + kPage) << "rounded up to a page";
  cache.finish();
  EXPECT_TRUE(fake.ours.empty());
  EXPECT_EQ(cache.registrations(), 0u);
  EXPECT_EQ(cache.prepare({a}), std::vector<bool>{true}) << "registered again next call";
  EXPECT_EQ(fake.calls, 2);
  // A call that begins while an earlier one's registrations remain ends them first: nothing
  // carries over from call to call.
  EXPECT_EQ(cache.prepare({a}), std::vector<bool>{true});
  EXPECT_EQ(fake.calls, 3);
  EXPECT_EQ(fake.ours.size(), 1u);
  cache.finish();
  EXPECT_TRUE(fake.ours.empty());
}

// A and B sharing a page (one allocation, A's end and B's start in the same page), or the same
// matrix passed twice (A = B): one registration covers both; CUDA would refuse the second.
TEST(HostRegister, RangesSharingAPageAreRegisteredAsOne) {
  fake_registrar fake;
  registration_cache cache(&fake, kPage, kMiB, size_t{1} << 40);
  const byte_range a = at(kBase, 64 * kMiB + 8), b = at(kBase + 64 * kMiB + 16, 32 * kMiB);
  EXPECT_EQ(cache.prepare({a, b, a}), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(fake.ours.size(), 1u);
  EXPECT_EQ(cache.last().registered, 1);
  cache.finish();
  // Adjacent but on different pages: two registrations.
  const byte_range c = at(kBase, 64 * kMiB), d = at(kBase + 64 * kMiB, 64 * kMiB);
  EXPECT_EQ(cache.prepare({c, d}), (std::vector<bool>{true, true}));
  EXPECT_EQ(fake.ours.size(), 2u);
  cache.finish();
}

// The application's own registration (cudaHostRegister or cudaMallocHost memory): refused as
// already registered, staged, and never unregistered by the library. Memory that cannot be
// pinned: staged.
TEST(HostRegister, ForeignAndUnpinnableMemoryIsStaged) {
  fake_registrar fake;
  fake.foreign[kBase] = kBase + 8 * kMiB;
  fake.unpinnable[kBase + (1ull << 33)] = kBase + (1ull << 33) + 128 * kMiB;
  registration_cache cache(&fake, kPage, kMiB, size_t{1} << 40);
  const byte_range mine = at(kBase + 4 * kMiB, 64 * kMiB);  // overlaps the application's
  const byte_range ro = at(kBase + (1ull << 33) + kPage, 16 * kMiB);
  const byte_range ok = at(kBase + (1ull << 34), 16 * kMiB);
  EXPECT_EQ(cache.prepare({mine, ro, ok}), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(cache.last().refused, 1);
  EXPECT_EQ(cache.last().failed, 1);
  EXPECT_EQ(cache.last().registered, 1);
  cache.finish();
  EXPECT_EQ(fake.foreign.size(), 1u);
  EXPECT_EQ(fake.unregisters, 1) << "only ours";
  EXPECT_TRUE(fake.ours.empty());
}

// The cap: a range larger than the cap is staged, and a call never holds more than the cap.
// Nothing of one call stays registered for the next.
TEST(HostRegister, TheCapBoundsWhatIsRegistered) {
  fake_registrar fake;
  registration_cache call(&fake, kPage, kMiB, 100 * kMiB);
  const byte_range a = at(kBase, 40 * kMiB), b = at(kBase + (1ull << 32), 40 * kMiB);
  const byte_range c = at(kBase + (2ull << 32), 40 * kMiB),
                   big = at(kBase + (3ull << 32), 128 * kMiB);
  EXPECT_EQ(call.prepare({a, b, c}), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(call.last().over_cap, 1);
  EXPECT_LE(fake.bytes(), 100 * kMiB);
  call.finish();
  EXPECT_TRUE(fake.ours.empty());
  EXPECT_EQ(call.prepare({big}), std::vector<bool>{false}) << "over the cap alone";
  EXPECT_EQ(call.last().over_cap, 1);
  call.finish();
  EXPECT_EQ(call.prepare({c}), std::vector<bool>{true}) << "the cap is free again";
  EXPECT_EQ(call.last().registered, 1);
  call.finish();
  EXPECT_TRUE(fake.ours.empty());
}

TEST(HostRegister, EmptyRangesAreNeverDirect) {
  fake_registrar fake;
  registration_cache cache(&fake, kPage, 0, size_t{1} << 40);
  EXPECT_EQ(cache.prepare({byte_range{kBase, kBase}}), std::vector<bool>{false});
  EXPECT_EQ(fake.calls, 0);
  EXPECT_THROW(registration_cache(&fake, 3000, 0, 1), std::invalid_argument);
}

}  // namespace
