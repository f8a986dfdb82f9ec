// One worker of the host path: a GPU (or a share of one) with its own streams, pinned
// staging, device buffers, cuBLAS handle and workspace, and packing threads, running the
// pipeline of offload.hpp over the column tiles it takes from a queue.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/device_guard.hpp"
#include "common/error.hpp"
#include "core/moduli_choice.hpp"
#include "core/moduli_setting.hpp"
#include "core/scaling_rules.hpp"
#include "engine/handle_context.hpp"
#include "host_path/a_share.hpp"
#include "host_path/host_copy.hpp"
#include "host_path/offload.hpp"
#include "host_path/tile_queue.hpp"

namespace ozdgemm::detail {

// Elements per pinned staging buffer (64 MiB); each worker has two for uploads and two for
// downloads.
inline constexpr int64_t kStagingElements = int64_t{8} << 20;

// The test-only failure of OZDGEMM_HOST_FAIL_AFTER, for one call.
struct fail_plan {
  long long after = -1;  // tiles finished before the failure; -1: none
  int worker = -1;       // -1: every worker
  bool hits(int index, int64_t tiles_done) const {
    return after >= 0 && (worker < 0 || worker == index) && tiles_done == after;
  }
};

class host_worker;

// One call's exchange of A among its workers (a_share.hpp): the plan, the hand-over, and the
// workers in the plan's order.
struct a_sharing {
  a_sharing(a_share_plan p, std::vector<host_worker*> workers)
      : plan(std::move(p)),
        state(static_cast<int>(workers.size()), plan.segments.count),
        crew(std::move(workers)) {}
  int position(const host_worker* w) const {
    for (size_t i = 0; i < crew.size(); ++i)
      if (crew[i] == w) return static_cast<int>(i);
    return -1;
  }
  a_share_plan plan;
  a_share_state state;
  std::vector<host_worker*> crew;
};

// The operands the GPUs copy directly from or to the caller's page-locked memory
// (host_register.hpp, OZDGEMM_HOST_REGISTER); the others go through pinned staging. C is
// written directly only when beta = 0: a copy that fails part way may leave columns of C
// written, which a worker or the CPU BLAS computing them again must not read.
struct host_direct {
  bool a = false, b = false, c_in = false, c_out = false;
};

// One call as the workers see it.
struct host_job {
  const host_gemm* g;
  moduli_setting moduli;  // chosen per call: for `target`, on one tile and one worker
  accuracy_target target;
  scaling_mode mode;
  int64_t width;  // columns of the widest tile (the queue's plan)
  fail_plan fail;
  // Null: each worker packs all of A itself (one worker, OZDGEMM_HOST_PEER=off, no linked GPUs).
  a_sharing* share = nullptr;
  host_direct direct{};
};

// Grow-only device or pinned host array of doubles.
template <bool Pinned>
struct grow_array {
  double* ptr = nullptr;
  int64_t count = 0;
  void reserve(int64_t n);
  void release();
};

// Host calls are serialised (they block the caller anyway), so a worker serves one call at a
// time, on one thread. Deliberately never destroyed: CUDA must not be called from static
// destructors.
class host_worker {
 public:
  // Constructed with `device` current (worker_set sees to it).
  host_worker(int index, int device, int threads);

  int index() const { return index_; }
  int device() const { return device_; }
  int threads() const { return pool_.threads(); }
  int64_t tiles_done() const { return tiles_done_; }
  // The moduli count the last call ran with (a per-call choice: the chosen one), and why the
  // choice ran none (null when it did; then no tile was multiplied and C is untouched).
  int ran_moduli() const { return ran_moduli_; }
  const char* declined() const { return declined_; }
  const std::string& declined_detail() const { return declined_detail_; }

  // Device bytes the job needs here (A, two B and two C tiles, the workspace), and those this
  // worker holds now (they are released before anything larger is taken).
  double need_bytes(const host_job& j) const;
  double held_bytes() const;

  // Takes tiles from q until none is left. If something fails, the tiles in hand go back to
  // the queue (the part of one already written to C stays done), and the exception propagates:
  // the worker retires from this call. Either way, when it returns nothing of this worker is
  // still copying, neither into buffers the next call reuses nor from or to the caller's
  // memory. Runs with device() current.
  void serve(const host_job& j, tile_queue& q);

 private:
  using tile = tile_queue::tile;

  void pipeline(const host_job& j, tile_queue& q);
  size_t workspace_for(const host_job& j, int64_t width) const;
  void reserve_workspace(const host_job& j);
  void send_own_a(const host_job& j, const host_block& a, int me);
  void verify_own_a(const host_job& j, int me);
  void fetch_a(const host_job& j, const host_block& a, int me);
  void upload_tile(const host_job& j, const tile& t, int slot);
  void compute_tile(const host_job& j, const tile& t, int slot, bool reuse_a);
  void upload(const host_block& src, double* dev, bool direct);
  [[noreturn]] void injected_failure(const tile& t) const;
  void download_tile(const host_job& j, const tile& t, int slot);

  int index_;
  int device_;
  handle_context engine_;  // private cuBLAS handle and workspace, as for device calls
  copy_pool pool_;
  cudaStream_t copy_in_ = nullptr, compute_ = nullptr, copy_out_ = nullptr;
  grow_array<true> stage_in_[2], stage_out_[2];
  cudaEvent_t staged_in_[2] = {}, staged_out_[2] = {}, tile_in_[2] = {}, computed_[2] = {};
  grow_array<false> a_, b_[2], c_[2];
  // A shared among workers: per segment, recorded once this worker's copy of it is enqueued
  // (the others wait on it); the peer copies done (on compute_) before segments are packed again
  // into the same columns (on copy_in_), and those packings before the first tile's product.
  std::vector<cudaEvent_t> a_ready_;
  cudaEvent_t a_fetched_ = nullptr, a_packed_ = nullptr;
  int a_from_host_ = 0, a_from_peers_ = 0;
  int a_last_own_ = -1;  // the last segment this worker owns, -1: none
  bool a_verified_ = false;
  int next_in_ = 0;
  int64_t cols_out_ = 1;
  // The call in progress: the tile being finished, the one taken ahead, and progress.
  tile cur_{}, next_{};
  bool has_cur_ = false, has_next_ = false;
  int64_t written_ = 0;
  int64_t tiles_done_ = 0;
  int ran_moduli_ = 0;
  const char* declined_ = nullptr;
  std::string declined_detail_;
  struct {
    double pack_s, unpack_s, wait_s;
  } clock_{};
};

}  // namespace ozdgemm::detail
