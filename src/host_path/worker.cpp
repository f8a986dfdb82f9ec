#include "host_path/worker.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <new>
#include <stdexcept>

#include "common/error.hpp"
#include "common/logging.hpp"
#include "core/checked_math.hpp"
#include "engine/emulate.hpp"
#include "engine/run.hpp"

namespace ozdgemm::detail {
namespace {

cudaEvent_t new_event() {
  cudaEvent_t e = nullptr;
  OZDGEMM_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

double elapsed(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// op(B)'s columns [j0, j0 + width) as stored: a k x width block (N) or width x k (T).
host_block b_block(const host_gemm& g, const tile_queue::tile& t) {
  if (g.opb == op_kind::n) return {g.b + t.j0 * g.ldb, g.ldb, g.k, t.width};
  return {g.b + t.j0, g.ldb, t.width, g.k};
}

template <class F>
void timed(double* acc, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  *acc += elapsed(t0);
}

}  // namespace

template <bool Pinned>
void grow_array<Pinned>::reserve(int64_t n) {
  if (n <= count) return;
  release();
  void* p = nullptr;
  size_t bytes = 0;
  if (!checked_bytes(n, sizeof(double), &bytes)) throw std::bad_alloc();
  cudaError_t e = Pinned ? cudaMallocHost(&p, bytes) : cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky; keep later launch checks clean
    OZDGEMM_CUDA_TRY(e);
  }
  ptr = static_cast<double*>(p);
  count = n;
}

template <bool Pinned>
void grow_array<Pinned>::release() {
  if (ptr != nullptr) {
    if (Pinned)
      cudaFreeHost(ptr);
    else
      cudaFree(ptr);
  }
  ptr = nullptr;
  count = 0;
}

template struct grow_array<true>;
template struct grow_array<false>;

// Constructed with `device` current (worker_at() sees to it).
host_worker::host_worker(int index, int device, int threads)
    : index_(index), device_(device), engine_(device), pool_(threads) {
  for (cudaStream_t* s : {&copy_in_, &compute_, &copy_out_})
    OZDGEMM_CUDA_TRY(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
  for (int i = 0; i < 2; ++i) {
    stage_in_[i].reserve(kStagingElements);
    stage_out_[i].reserve(kStagingElements);
    staged_in_[i] = new_event();
    staged_out_[i] = new_event();
    tile_in_[i] = new_event();
    computed_[i] = new_event();
  }
}

// Device bytes the job needs here (A, two B and two C tiles, the workspace), and those this
// worker holds now (they are released before anything larger is taken).
double host_worker::need_bytes(const host_job& j) const {
  const host_gemm& g = *j.g;
  const double doubles = static_cast<double>(g.m) * g.k +
                         2.0 * (static_cast<double>(g.k) + g.m) * static_cast<double>(j.width);
  return 8.0 * doubles +
         static_cast<double>(emulation_workspace_bytes(g.m, j.width, g.k, j.moduli, j.mode));
}

double host_worker::held_bytes() const {
  return 8.0 *
             static_cast<double>(a_.count + b_[0].count + b_[1].count + c_[0].count + c_[1].count) +
         static_cast<double>(engine_.workspace_bytes());
}

// Takes tiles from q until none is left. If something fails, the tiles in hand go back to
// the queue (the part of one already written to C stays done), nothing may still be copying
// into buffers the next call reuses, and the exception propagates: the worker retires from
// this call. Runs with device() current.
void host_worker::serve(const host_job& j, tile_queue& q) {
  tiles_done_ = 0;
  has_cur_ = has_next_ = false;
  written_ = 0;
  ran_moduli_ = 0;
  declined_ = nullptr;
  declined_detail_.clear();
  try {
    pipeline(j, q);
  } catch (...) {
    for (cudaStream_t s : {copy_in_, compute_, copy_out_}) cudaStreamSynchronize(s);
    cudaGetLastError();
    // The tile taken ahead first, so that the one being written is first in line again.
    if (has_next_) q.give_back(next_);
    if (has_cur_) q.give_back(cur_, written_);
    has_cur_ = has_next_ = false;
    throw;
  }
}

void host_worker::pipeline(const host_job& j, tile_queue& q) {
  const host_gemm& g = *j.g;
  if (!q.take_or_wait(&cur_)) return;
  has_cur_ = true;
  const bool a_n = g.opa == op_kind::n;
  const host_block a_blk{g.a, g.lda, a_n ? g.m : g.k, a_n ? g.k : g.m};

  a_.reserve(g.m * g.k);
  reserve_workspace(j);
  for (int i = 0; i < 2 && i < q.tiles(); ++i) {
    b_[i].reserve(g.k * j.width);
    c_[i].reserve(g.m * j.width);
  }
  // Whole columns per download chunk, so a failure never leaves a column half written.
  cols_out_ = std::max<int64_t>(1, kStagingElements / g.m);
  for (auto& s : stage_out_) s.reserve(cols_out_ * g.m);

  clock_ = {};
  const auto t0 = std::chrono::steady_clock::now();
  upload(a_blk, a_.ptr);
  const double a_s = elapsed(t0);
  bool used[2] = {false, false}, reuse_a = false;
  auto start = [&](const tile& t, int slot) {
    // The slot's previous tile must be multiplied before its B is overwritten.
    if (used[slot]) OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(copy_in_, computed_[slot]));
    upload_tile(g, t, slot);
    compute_tile(j, t, slot, reuse_a);  // A is prepared by the first tile, then reused
    used[slot] = true;
    reuse_a = true;
  };
  int slot = 0;
  start(cur_, slot);
  if (declined_ != nullptr) {  // per-call choice: one tile (tile_columns), nothing written
    q.give_back(cur_);
    has_cur_ = false;
    return;
  }
  // The tile after cur_ is taken, sent and multiplied before cur_ comes back: alone, this
  // worker runs the one-GPU pipeline in its order.
  for (;;) {
    has_next_ = q.take(&next_);
    if (has_next_) start(next_, slot ^ 1);
    download_tile(j, cur_, slot);
    q.done(cur_);
    has_cur_ = false;
    written_ = 0;
    ++tiles_done_;
    slot ^= 1;
    if (has_next_) {
      cur_ = next_;
      has_cur_ = true;
      has_next_ = false;
      continue;
    }
    // None waiting: another worker may still fail and give tiles back.
    if (!q.take_or_wait(&cur_)) break;
    has_cur_ = true;
    start(cur_, slot);
  }
  // Where the host's time went: packing and unpacking are the host-bound parts, waits are
  // time the GPU or the copies kept the host idle.
  logger().debug(
      "host path {}x{}x{}, worker {} (GPU {}): {} of {} tile(s) of {} columns, {} threads; "
      "A packed in {:.1f} ms; pack {:.1f} ms, unpack {:.1f} ms, waits {:.1f} ms, "
      "total {:.1f} ms",
      g.m, g.n, g.k, index_, device_, tiles_done_, q.tiles(), j.width, pool_.threads(), a_s * 1e3,
      clock_.pack_s * 1e3, clock_.unpack_s * 1e3, clock_.wait_s * 1e3, elapsed(t0) * 1e3);
}

size_t host_worker::workspace_for(const host_job& j, int64_t width) const {
  return emulation_workspace_bytes(j.g->m, width, j.g->k, j.moduli, j.mode);
}

// The workspace for the widest tile, before A is prepared in it: a later, wider tile would
// otherwise grow it, and a grown workspace no longer holds A's scaling and residues (reuse_a).
// Tiles come in any width order: the tail's narrow ones, the rest of a tile given back.
void host_worker::reserve_workspace(const host_job& j) {
  std::lock_guard<std::mutex> lock(engine_.mutex());
  engine_.begin(compute_);
  engine_.workspace(workspace_for(j, j.width));
  engine_.end();
}

void host_worker::upload_tile(const host_gemm& g, const tile& t, int slot) {
  upload(b_block(g, t), b_[slot].ptr);
  if (g.beta != 0.0) upload({g.c + t.j0 * g.ldc, g.ldc, g.m, t.width}, c_[slot].ptr);
  OZDGEMM_CUDA_TRY(cudaEventRecord(tile_in_[slot], copy_in_));
}

void host_worker::compute_tile(const host_job& j, const tile& t, int slot, bool reuse_a) {
  const host_gemm& g = *j.g;
  OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(compute_, tile_in_[slot]));
  const bool a_n = g.opa == op_kind::n, b_n = g.opb == op_kind::n;
  const gemm_problem p{g.m,
                       t.width,
                       g.k,
                       operand_a(g.opa, a_.ptr, a_n ? g.m : g.k),
                       operand_b(g.opb, b_[slot].ptr, b_n ? g.k : t.width),
                       c_[slot].ptr,
                       g.m};
  device_gemm call{p,
                   scalar_arg{nullptr, g.alpha},
                   scalar_arg{nullptr, g.beta},
                   j.moduli,
                   j.mode,
                   compute_,
                   nullptr,
                   nullptr};
  // A workspace too small for this tile grows, losing A's residues: prepare A again then (the same
  // bits). reserve_workspace makes this the exception (another call's context work, a failure).
  call.reuse_a = reuse_a && workspace_for(j, t.width) <= engine_.workspace_bytes();
  call.target = j.target;
  const run_outcome run = run_on_context(engine_, call);  // a choice synchronises compute_
  ran_moduli_ = run.s;
  if (run.s == 0) {
    declined_ = run.declined;
    declined_detail_ = run.choice.why;
    return;
  }
  OZDGEMM_CUDA_TRY(cudaEventRecord(computed_[slot], compute_));
}

// Host block -> dense device array, through the two input staging buffers: the threads
// pack one buffer while the other one's copy is in flight.
void host_worker::upload(const host_block& src, double* dev) {
  const int64_t total = src.rows * src.cols;
  for (int64_t first = 0; first < total; first += kStagingElements) {
    const int64_t count = std::min(kStagingElements, total - first);
    const int buf = next_in_;
    next_in_ ^= 1;
    timed(&clock_.wait_s, [&] { OZDGEMM_CUDA_TRY(cudaEventSynchronize(staged_in_[buf])); });
    timed(&clock_.pack_s, [&] { pack_range(pool_, src, first, count, stage_in_[buf].ptr); });
    OZDGEMM_CUDA_TRY(cudaMemcpyAsync(dev + first, stage_in_[buf].ptr,
                                     static_cast<size_t>(count) * sizeof(double),
                                     cudaMemcpyHostToDevice, copy_in_));
    OZDGEMM_CUDA_TRY(cudaEventRecord(staged_in_[buf], copy_in_));
  }
}

// OZDGEMM_HOST_FAIL_AFTER (test-only): this worker fails here.
void host_worker::injected_failure(const tile& t) const {
  logger().warn(
      "injected fault: host path worker {} (GPU {}) fails after {} tile(s), {} of "
      "the {} columns from {} written",
      index_, device_, tiles_done_, written_, t.width, t.j0);
  throw cuda_error(cudaErrorUnknown, "injected fault: host path worker failure");
}

// Tile of C -> caller's C, whole columns per chunk through the two output staging buffers:
// the next chunk's copy is in flight while the threads unpack this one. written_ counts the
// columns of t that hold their final values.
void host_worker::download_tile(const host_job& j, const tile& t, int slot) {
  const host_gemm& g = *j.g;
  const bool fail = j.fail.hits(index_, tiles_done_);
  OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(copy_out_, computed_[slot]));
  const int64_t chunks = (t.width + cols_out_ - 1) / cols_out_;
  auto enqueue = [&](int64_t c) {
    const int64_t cols = std::min(cols_out_, t.width - c * cols_out_);
    OZDGEMM_CUDA_TRY(cudaMemcpyAsync(stage_out_[c % 2].ptr, c_[slot].ptr + c * cols_out_ * g.m,
                                     static_cast<size_t>(cols * g.m) * sizeof(double),
                                     cudaMemcpyDeviceToHost, copy_out_));
    OZDGEMM_CUDA_TRY(cudaEventRecord(staged_out_[c % 2], copy_out_));
  };
  enqueue(0);
  for (int64_t c = 0; c < chunks; ++c) {
    // Part way through the tile when it has several chunks: the partial give-back path.
    if (fail && (c == chunks / 2)) injected_failure(t);
    if (c + 1 < chunks) enqueue(c + 1);
    timed(&clock_.wait_s, [&] { OZDGEMM_CUDA_TRY(cudaEventSynchronize(staged_out_[c % 2])); });
    const int64_t j0 = t.j0 + c * cols_out_, cols = std::min(cols_out_, t.width - c * cols_out_);
    timed(&clock_.unpack_s, [&] {
      unpack_range(pool_, stage_out_[c % 2].ptr, {g.c + j0 * g.ldc, g.ldc, g.m, cols}, 0,
                   cols * g.m);
    });
    written_ = j0 + cols - t.j0;
  }
}

}  // namespace ozdgemm::detail
