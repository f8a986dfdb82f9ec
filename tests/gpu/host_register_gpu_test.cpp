// What the host path assumes of CUDA when it page-locks the caller's matrices
// (src/host_path/host_register.hpp) and links GPUs for A's exchange (src/host_path/a_share.hpp),
// checked with the real runtime: a registration of ours is page-locked memory until call mode
// releases it, memory the program page-locked itself is refused as registered already (and
// staged, never unregistered by the library), and two GPUs are linked exactly when each can
// access the other, after which a peer copy gives the same bytes.
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "gpu_fixture.hpp"
#include "host_path/a_share.hpp"
#include "host_path/host_register.hpp"

namespace {

using namespace ozdgemm::detail;

constexpr size_t kMiB = size_t{1} << 20;

size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

bool page_locked(const void* p) {
  unsigned flags = 0;
  const bool yes = cudaHostGetFlags(&flags, const_cast<void*>(p)) == cudaSuccess;
  (void)cudaGetLastError();
  return yes;
}

class HostRegisterGpu : public GpuTest {};

TEST_F(HostRegisterGpu, CallModeLocksForTheCallOnly) {
  std::vector<double> v(72 * kMiB / sizeof(double), 1.5);
  registration_cache cache(&cuda_registrar(), page(), 64 * kMiB, size_t{1} << 40);
  // A 3000 x 3000 block with ld 3001 inside v (not page-aligned at either end).
  const double* base = v.data() + 5;
  const std::vector<bool> direct = cache.prepare({block_bytes(base, 3001, 3000, 3000)});
  ASSERT_EQ(direct, std::vector<bool>{true});
  EXPECT_EQ(cache.last().registered, 1);
  EXPECT_TRUE(page_locked(base));
  EXPECT_TRUE(page_locked(base + 3000 * 3001 - 2)) << "up to the last element";
  // The copy the workers make of such a block: pitched, straight from the caller's memory.
  double* dev = nullptr;
  ASSERT_CUDA(cudaMalloc(&dev, 3000 * 3000 * sizeof(double)));
  ASSERT_CUDA(cudaMemcpy2D(dev, 3000 * sizeof(double), base, 3001 * sizeof(double),
                           3000 * sizeof(double), 3000, cudaMemcpyHostToDevice));
  std::vector<double> back(3000);
  ASSERT_CUDA(
      cudaMemcpy(back.data(), dev + 2999 * 3000, 3000 * sizeof(double), cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, std::vector<double>(3000, 1.5));
  cudaFree(dev);
  cache.finish();
  EXPECT_FALSE(page_locked(base)) << "released by call mode";
}

// Memory the program locked itself (cudaMallocHost, or its own cudaHostRegister of a range the
// library's page-rounded range overlaps): CUDA refuses to register it again; staged.
TEST_F(HostRegisterGpu, TheProgramsOwnPageLockedMemoryIsRefused) {
  registration_cache cache(&cuda_registrar(), page(), kMiB, size_t{1} << 40);
  double* pinned = nullptr;
  ASSERT_CUDA(cudaMallocHost(&pinned, 16 * kMiB));
  std::vector<double> v(16 * kMiB / sizeof(double));
  ASSERT_CUDA(
      cudaHostRegister(v.data() + 1, v.size() * sizeof(double) - 16, cudaHostRegisterDefault));
  const std::vector<bool> direct = cache.prepare(
      {block_bytes(pinned + 100, 1000, 1000, 1000), block_bytes(v.data(), 1000, 1000, 1000)});
  EXPECT_EQ(direct, (std::vector<bool>{false, false}));
  // CUDA refuses both, though not always as "already registered": on an H100 (driver 580) one
  // of the two came back as another error. Either way the memory is staged.
  EXPECT_EQ(cache.last().refused + cache.last().failed, 2)
      << "refused " << cache.last().refused << ", failed " << cache.last().failed;
  EXPECT_EQ(cache.last().registered, 0);
  EXPECT_EQ(cache.registrations(), 0u);
  cache.finish();
  EXPECT_TRUE(page_locked(v.data() + 1)) << "the program's registration is left alone";
  ASSERT_CUDA(cudaHostUnregister(v.data() + 1));
  cudaFreeHost(pinned);
}

TEST_F(HostRegisterGpu, GpusAreLinkedExactlyWhenEachReachesTheOther) {
  EXPECT_TRUE(process_peer_links().linked(0, 0));
  int count = 0;
  ASSERT_CUDA(cudaGetDeviceCount(&count));
  if (count < 2) GTEST_SKIP() << "one GPU: no peer link to check (not a pass)";
  int there = 0, back = 0;
  ASSERT_CUDA(cudaDeviceCanAccessPeer(&there, 0, 1));
  ASSERT_CUDA(cudaDeviceCanAccessPeer(&back, 1, 0));
  const bool linked = process_peer_links().linked(0, 1);
  EXPECT_EQ(linked, there != 0 && back != 0);
  EXPECT_EQ(process_peer_links().linked(1, 0), linked);
  if (!linked) GTEST_SKIP() << "GPUs 0 and 1 have no peer access: the exchange is not used";
  // Enabled both ways: enabling again reports it (the library tolerates exactly this).
  ASSERT_CUDA(cudaSetDevice(1));
  EXPECT_EQ(cudaDeviceEnablePeerAccess(0, 0), cudaErrorPeerAccessAlreadyEnabled);
  (void)cudaGetLastError();
  std::vector<double> h(kMiB);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<double>(i) * 0.25;
  double *on1 = nullptr, *on0 = nullptr;
  ASSERT_CUDA(cudaMalloc(&on1, h.size() * sizeof(double)));
  ASSERT_CUDA(cudaSetDevice(0));
  ASSERT_CUDA(cudaMalloc(&on0, h.size() * sizeof(double)));
  ASSERT_CUDA(cudaMemcpy(on0, h.data(), h.size() * sizeof(double), cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemcpyPeer(on1, 1, on0, 0, h.size() * sizeof(double)));
  std::vector<double> got(h.size());
  ASSERT_CUDA(cudaMemcpy(got.data(), on1, got.size() * sizeof(double), cudaMemcpyDeviceToHost));
  EXPECT_EQ(std::memcmp(got.data(), h.data(), h.size() * sizeof(double)), 0);
  cudaFree(on0);
  cudaFree(on1);
}

}  // namespace
