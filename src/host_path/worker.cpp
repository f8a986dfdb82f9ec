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

// Segment g of the stored A (a_share.hpp), and where it goes in the dense copy on the GPU.
host_block a_segment(const host_block& a, const a_segments& seg, int g) {
  return {a.base + seg.first(g) * a.ld, a.ld, a.rows, seg.columns(g)};
}
int64_t a_offset(const host_block& a, const a_segments& seg, int g) {
  return seg.first(g) * a.rows;
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
  a_fetched_ = new_event();
  a_packed_ = new_event();
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
// the queue (the part of one already written to C stays done), and the exception propagates:
// the worker retires from this call. Either way its streams are idle when it returns: nothing
// copies into buffers the next call reuses, nor from or to the caller's memory. Runs with
// device() current.
void host_worker::serve(const host_job& j, tile_queue& q) {
  tiles_done_ = 0;
  has_cur_ = has_next_ = false;
  written_ = 0;
  ran_moduli_ = 0;
  declined_ = nullptr;
  declined_detail_.clear();
  try {
    pipeline(j, q);
    // Nothing of this worker touches host memory once the call returns (the caller's matrices
    // may be page-locked only for the call, and are the caller's again).
    for (cudaStream_t s : {copy_in_, compute_, copy_out_})
      OZDGEMM_CUDA_TRY(cudaStreamSynchronize(s));
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
  // Sharing A: this worker's segments go to its GPU (and out to the others) whether or not it
  // gets a tile, so it takes one only after.
  const int me = j.share != nullptr ? j.share->position(this) : -1;
  if (j.share != nullptr && me < 0) throw std::logic_error("host path: worker not in the crew");
  if (me < 0) {
    if (!q.take_or_wait(&cur_)) return;
    has_cur_ = true;
  }
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
  a_from_host_ = a_from_peers_ = 0;
  const auto t0 = std::chrono::steady_clock::now();
  if (me < 0) {
    upload(a_blk, a_.ptr, j.direct.a);
    a_from_host_ = 1;
  } else {
    send_own_a(j, a_blk, me);
  }
  const double a_s = elapsed(t0);
  const int a_parts = me < 0 ? 1 : j.share->plan.segments.count;
  if (me >= 0) {
    bool got = q.take(&cur_);
    if (!got) {
      // Before waiting for a tile: the workers holding them may be waiting for this.
      verify_own_a(j, me);
      got = q.take_or_wait(&cur_);
    }
    if (!got) {
      logger().debug(
          "host path {}x{}x{}, worker {} (GPU {}): no tile; A: {} of {} segment(s) from the host "
          "in {:.1f} ms",
          g.m, g.n, g.k, index_, device_, a_from_host_, a_parts, a_s * 1e3);
      return;
    }
    has_cur_ = true;
  }
  bool used[2] = {false, false}, reuse_a = false, a_whole = me < 0;
  auto start = [&](const tile& t, int slot) {
    // The slot's previous tile must be multiplied before its B is overwritten.
    if (used[slot]) OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(copy_in_, computed_[slot]));
    upload_tile(j, t, slot);
    if (!a_whole) {  // the other workers' segments, behind this tile's B
      fetch_a(j, a_blk, me);
      a_whole = true;
    }
    compute_tile(j, t, slot, reuse_a);  // A is prepared by the first tile, then reused
    used[slot] = true;
    reuse_a = true;
  };
  int slot = 0;
  start(cur_, slot);
  if (declined_ != nullptr) {  // per-call choice: one tile (tile_widths), nothing written
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
      "host path {}x{}x{}, worker {} (GPU {}): {} of {} tile(s) of up to {} columns, {} threads; "
      "A: {} of {} segment(s) from the host in {:.1f} ms, {} from other workers' GPUs; "
      "pack {:.1f} ms, unpack {:.1f} ms, waits {:.1f} ms, total {:.1f} ms",
      g.m, g.n, g.k, index_, device_, tiles_done_, q.tiles(), j.width, pool_.threads(),
      a_from_host_, a_parts, a_s * 1e3, a_from_peers_, clock_.pack_s * 1e3, clock_.unpack_s * 1e3,
      clock_.wait_s * 1e3, elapsed(t0) * 1e3);
}

// The segments of A this worker owns: packed from the host (or copied directly from page-locked
// memory) onto its GPU, each published as soon as its copy is enqueued. Nothing here waits for
// another worker.
void host_worker::send_own_a(const host_job& j, const host_block& a, int me) {
  a_sharing& sh = *j.share;
  const a_segments& seg = sh.plan.segments;
  while (static_cast<int>(a_ready_.size()) < seg.count) a_ready_.push_back(new_event());
  a_last_own_ = -1;
  a_verified_ = false;
  for (int g = 0; g < seg.count; ++g) {
    if (!sh.plan.owns(me, g)) continue;
    upload(a_segment(a, seg, g), a_.ptr + a_offset(a, seg, g), j.direct.a);
    OZDGEMM_CUDA_TRY(cudaEventRecord(a_ready_[static_cast<size_t>(g)], copy_in_));
    sh.state.published(me, g);
    ++a_from_host_;
    a_last_own_ = g;
  }
}

// The segments this worker owns have arrived: the other GPUs may compute with their copies. The
// last of them on copy_in_ stands for all; a copy that failed on the way fails here, before any
// other GPU computes with it. Done once the other segments' copies are enqueued (so that they
// overlap this worker's own copies), or, with no tile to compute, at once.
void host_worker::verify_own_a(const host_job& j, int me) {
  if (a_verified_) return;
  if (a_last_own_ >= 0)
    timed(&clock_.wait_s, [&] {
      OZDGEMM_CUDA_TRY(cudaEventSynchronize(a_ready_[static_cast<size_t>(a_last_own_)]));
    });
  j.share->state.verified(me);
  a_verified_ = true;
}

// The other segments of A, copied GPU to GPU from their owners on compute_ (so the first
// product waits for them, the B and C uploads do not) as each is published. A segment whose
// owner retired before publishing it, or before verifying its own, is packed here from the host.
void host_worker::fetch_a(const host_job& j, const host_block& a, int me) {
  a_sharing& sh = *j.share;
  const a_segments& seg = sh.plan.segments;
  std::vector<int> copied, again;
  for (int g = 0; g < seg.count; ++g) {
    const int src = sh.plan.source[static_cast<size_t>(me)][static_cast<size_t>(g)];
    if (src == me) continue;
    bool published = false;
    timed(&clock_.wait_s, [&] { published = sh.state.wait_published(src, g); });
    if (!published) {
      again.push_back(g);
      continue;
    }
    const host_worker& from = *sh.crew[static_cast<size_t>(src)];
    const int64_t off = a_offset(a, seg, g);
    const size_t bytes = static_cast<size_t>(seg.columns(g) * a.rows) * sizeof(double);
    OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(compute_, from.a_ready_[static_cast<size_t>(g)]));
    if (from.device_ == device_)
      OZDGEMM_CUDA_TRY(cudaMemcpyAsync(a_.ptr + off, from.a_.ptr + off, bytes,
                                       cudaMemcpyDeviceToDevice, compute_));
    else
      OZDGEMM_CUDA_TRY(cudaMemcpyPeerAsync(a_.ptr + off, device_, from.a_.ptr + off, from.device_,
                                           bytes, compute_));
    copied.push_back(g);
  }
  verify_own_a(j, me);
  for (int g : copied) {
    const int src = sh.plan.source[static_cast<size_t>(me)][static_cast<size_t>(g)];
    bool good = false;
    timed(&clock_.wait_s, [&] { good = sh.state.wait_verified(src); });
    if (good)
      ++a_from_peers_;
    else
      again.push_back(g);
  }
  if (again.empty()) return;
  logger().debug(
      "host path: worker {} (GPU {}) packs {} segment(s) of A itself: their owner "
      "stopped before sending or checking them",
      index_, device_, again.size());
  // The peer copies into those columns may still run: the packing's copies go after them.
  OZDGEMM_CUDA_TRY(cudaEventRecord(a_fetched_, compute_));
  OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(copy_in_, a_fetched_));
  for (int g : again) upload(a_segment(a, seg, g), a_.ptr + a_offset(a, seg, g), j.direct.a);
  OZDGEMM_CUDA_TRY(cudaEventRecord(a_packed_, copy_in_));
  OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(compute_, a_packed_));
  a_from_host_ += static_cast<int>(again.size());
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

void host_worker::upload_tile(const host_job& j, const tile& t, int slot) {
  const host_gemm& g = *j.g;
  upload(b_block(g, t), b_[slot].ptr, j.direct.b);
  if (g.beta != 0.0) upload({g.c + t.j0 * g.ldc, g.ldc, g.m, t.width}, c_[slot].ptr, j.direct.c_in);
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
// pack one buffer while the other one's copy is in flight. `direct`: the block lies in
// page-locked memory (host_register.hpp) and the GPU copies it itself, nothing packed.
void host_worker::upload(const host_block& src, double* dev, bool direct) {
  if (direct) {
    const size_t col_bytes = static_cast<size_t>(src.rows) * sizeof(double);
    if (src.ld == src.rows)
      OZDGEMM_CUDA_TRY(cudaMemcpyAsync(dev, src.base, col_bytes * static_cast<size_t>(src.cols),
                                       cudaMemcpyHostToDevice, copy_in_));
    else
      OZDGEMM_CUDA_TRY(cudaMemcpy2DAsync(
          dev, col_bytes, src.base, static_cast<size_t>(src.ld) * sizeof(double), col_bytes,
          static_cast<size_t>(src.cols), cudaMemcpyHostToDevice, copy_in_));
    return;
  }
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
// columns of t that hold their final values. With j.direct.c_out (C page-locked, beta = 0) the
// GPU writes each chunk into C itself: a chunk in flight when this worker fails may land in C,
// and since beta = 0 the worker that computes those columns again does not read them.
void host_worker::download_tile(const host_job& j, const tile& t, int slot) {
  const host_gemm& g = *j.g;
  const bool fail = j.fail.hits(index_, tiles_done_);
  OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(copy_out_, computed_[slot]));
  const int64_t chunks = (t.width + cols_out_ - 1) / cols_out_;
  const bool direct = j.direct.c_out;
  auto enqueue = [&](int64_t c) {
    const int64_t cols = std::min(cols_out_, t.width - c * cols_out_);
    const double* from = c_[slot].ptr + c * cols_out_ * g.m;
    const size_t col_bytes = static_cast<size_t>(g.m) * sizeof(double);
    if (direct)
      OZDGEMM_CUDA_TRY(cudaMemcpy2DAsync(
          g.c + (t.j0 + c * cols_out_) * g.ldc, static_cast<size_t>(g.ldc) * sizeof(double), from,
          col_bytes, col_bytes, static_cast<size_t>(cols), cudaMemcpyDeviceToHost, copy_out_));
    else
      OZDGEMM_CUDA_TRY(cudaMemcpyAsync(stage_out_[c % 2].ptr, from,
                                       col_bytes * static_cast<size_t>(cols),
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
    if (!direct)
      timed(&clock_.unpack_s, [&] {
        unpack_range(pool_, stage_out_[c % 2].ptr, {g.c + j0 * g.ldc, g.ldc, g.m, cols}, 0,
                     cols * g.m);
      });
    written_ = j0 + cols - t.j0;
  }
}

}  // namespace ozdgemm::detail
