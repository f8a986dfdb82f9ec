// A once for several workers: the host packs and sends each part of A over PCIe once, and the
// GPUs exchange the parts over their peer links (NVLink or PCIe peer-to-peer), instead of every
// worker packing all of A. Only the host-side logic lives here (which GPU brings which part of
// A, and the hand-over between the workers' threads), so that tests/cpu can check it without a
// GPU; the copies are the workers' (worker.cpp).
//
// What is exchanged is the packed FP64 A (8 bytes an element), not its scaled residues (s bytes
// an element, s >= 9 in practice: more to copy). Each GPU then computes A's scaling and residues
// itself with the same kernels on the same bits, and with fast scaling a row's exponent depends on
// that row alone, so every GPU holds exactly the A' of a one-GPU call: C is bit-identical for any
// split of the columns of C and any source of A's parts.
//
// Never NVLink multicast and no NCCL: plain peer copies (cudaMemcpyPeerAsync) between two GPUs.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace ozdgemm::detail {

// The stored A (column-major, `cols` columns) in `count` segments of whole columns: segment g is
// columns [first(g), first(g + 1)). count >= 1; count <= cols when cols >= 1.
struct a_segments {
  int64_t cols = 0;
  int count = 1;
  int64_t first(int g) const { return cols * g / count; }
  int64_t columns(int g) const { return first(g + 1) - first(g); }
};

// Who brings each segment of A to each worker of one call.
struct a_share_plan {
  a_segments segments;
  // source[w][g]: the worker (crew position) whose GPU worker w copies segment g from; w itself
  // when w packs it from the host. A worker that sources a segment itself publishes it for the
  // others (a_share_state).
  std::vector<std::vector<int>> source;
  bool owns(int w, int g) const {
    return source[static_cast<size_t>(w)][static_cast<size_t>(g)] == w;
  }
  int owned(int w) const;
};

// Segments per worker of a group: A's host-side packing is shared among the group's workers,
// and a GPU copies a segment as soon as its owner has sent it, so that the exchange overlaps the
// packing rather than following it.
inline constexpr int kSegmentsPerWorker = 4;

// The plan for a crew on GPUs `devices` (crew order) and a stored A of `cols` columns.
// linked(a, b): GPUs a and b can copy each other's memory directly (peer_links::linked); a GPU
// and itself always can. Workers are put in groups whose GPUs are all linked pairwise (greedily,
// in crew order); within a group the segments are owned round-robin and each worker copies the
// others' from their owners. A worker linked to no earlier group forms its own and packs all of
// A, as every worker did before. One worker, or sharing off: each packs all of A.
a_share_plan plan_a_share(const std::vector<int>& devices, int64_t cols,
                          const std::function<bool(int, int)>& linked, bool share);

// One call's hand-over between the workers' threads. A worker publishes a segment once its
// copy onto its GPU is enqueued and the segment's event recorded (so another worker may wait on
// that event: an event must be recorded before cudaStreamWaitEvent sees this call's work), and
// is verified once the host has seen every segment it owns arrive without error (an
// asynchronous failure would otherwise reach the other GPUs as stale data). A worker retires at
// the end of its part in the call, normally or not: waits on what it never did then fail, and
// the waiting worker packs those segments from the host itself.
class a_share_state {
 public:
  a_share_state(int workers, int segments);

  void published(int w, int g);
  void verified(int w);
  void retired(int w);
  // True once w published g (or verified); false if w retired first. Blocks until one holds.
  bool wait_published(int w, int g);
  // True once w verified; false if w retired first.
  bool wait_verified(int w);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int segments_;
  std::vector<char> published_;  // [w][g]
  std::vector<char> verified_, retired_;
};

// Whether two GPUs copy each other's memory directly, decided once per pair for the process: both
// directions must be possible (cudaDeviceCanAccessPeer) and enabled (cudaDeviceEnablePeerAccess,
// whose cudaErrorPeerAccessAlreadyEnabled, from the application or an earlier call, counts as
// enabled). Enabling is process-wide and permanent: it is what lets cudaMemcpyPeerAsync go over
// the link instead of through host memory. A GPU and itself are always linked. The operations
// are injected so that tests/cpu can drive the bookkeeping.
class peer_links {
 public:
  enum class enable_result { enabled, already_enabled, failed };
  struct operations {
    std::function<bool(int from, int to)> can_access;
    // Enables `from`'s access to `to`'s memory.
    std::function<enable_result(int from, int to)> enable;
  };
  explicit peer_links(operations ops) : ops_(std::move(ops)) {}

  bool linked(int a, int b);

 private:
  operations ops_;
  std::mutex mutex_;
  std::map<std::pair<int, int>, bool> known_;
};

// The process's links, over the CUDA runtime (logs a failure to enable once per pair at debug).
// Created on first use; never destroyed.
peer_links& process_peer_links();

}  // namespace ozdgemm::detail
