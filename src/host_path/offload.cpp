// Host-memory DGEMM on the GPU(s). Operands are packed by several threads (host_copy.hpp) into
// persistent pinned staging buffers and copied into persistent device buffers; the engine
// multiplies them exactly as it multiplies device calls, so C is bit-identical to
// ozdgemm_dgemm on the same data.
//
// Large calls are pipelined over tiles of C's columns (fast scaling only, see below):
//
//   host:     pack A | pack B0 | pack B1  unpack C0 | pack B2  unpack C1 | ...
//   copy in:    A      B0        B1                  B2
//   compute:                 C0 (A prepared)  C1 (A reused)  C2 ...
//   copy out:                              C0                 C1 ...
//
// so that after A has crossed, the GPU multiplies one tile while the next tile's B comes in
// and the previous tile's C goes out. A's scaling and residues are computed once, on the first
// tile, and reused (device_gemm::reuse_a): with fast scaling every row's exponent depends on
// that row alone, so the tiles compute exactly what one call over all columns computes.
// Accurate scaling's row exponents depend on all of B, so there the call is one tile, and only
// the packing overlaps the copies. So is a call whose moduli count is chosen
// per call (auto, certified): the choice reads the statistics of all of A and B
// (engine/certificate.cpp), which a tile does not see; the one worker then chooses exactly what
// ozdgemm_dgemm chooses on the same data, or declines, and the caller runs the CPU BLAS.
//
// Several GPUs (OZDGEMM_DEVICES), or several workers on one GPU
// (OZDGEMM_HOST_WORKERS_PER_DEVICE): each worker is the pipeline above with its own streams,
// staging, device buffers, cuBLAS handle and packing threads. Each prepares A on its GPU once,
// then takes column tiles from one tile_queue as it gets free (dynamic: a shared or slower GPU
// takes fewer). By the argument above, any assignment of tiles gives the bits of one worker.
// A itself crosses from the host once per group of GPUs with peer access: each worker packs a
// share of it and copies the others' shares from their GPUs (a_share.hpp, OZDGEMM_HOST_PEER).
// One worker is the caller's thread running that pipeline in that order.
//
// If a worker fails, the columns of C it already wrote are final; it gives the rest of its
// tiles back to the queue and retires, and the other workers take them. Whatever no worker
// finishes is returned to the caller, which computes it on the CPU BLAS.
#include "host_path/offload.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/fp_flags.hpp"
#include "common/logging.hpp"
#include "core/moduli_choice.hpp"
#include "dispatch/call_log.hpp"
#include "dispatch/decision.hpp"
#include "dispatch/device_select.hpp"
#include "dispatch/gpu_model.hpp"
#include "dispatch/process_state.hpp"
#include "dispatch/settings.hpp"
#include "engine/moduli_history.hpp"
#include "engine/run.hpp"
#include "host_path/a_share.hpp"
#include "host_path/admission.hpp"
#include "host_path/host_register.hpp"
#include "host_path/worker.hpp"

namespace ozdgemm::detail {
namespace {

// The widths of C's column tiles (tile_queue.hpp's plan_tiles). Tiles only in fast scaling with a
// fixed moduli count (see the file comment); other calls are one tile.
std::vector<int64_t> tile_widths(int64_t n, scaling_mode mode, bool automatic, long long configured,
                                 int workers) {
  if (mode != scaling_mode::fast || automatic)
    return n > 0 ? std::vector<int64_t>{n} : std::vector<int64_t>{};
  return plan_tiles(n, workers, configured);
}

// A host call's target as a history key spells it (ozdgemm_options_t::accuracy): `native` on
// the host is 2^-53 (2^-55 complex), not a device call's `native`, so the two keep their counts
// apart (host_call_target).
int history_target(const config& cfg, bool complex) {
  const accuracy_target t = host_call_target(cfg.accuracy, cfg.moduli, complex);
  return t.cpu_blas ? 53 + t.native_shift : api_options(cfg).accuracy;
}

// Why no GPU can serve host calls, or nullptr. Checked once.
const char* gpu_unavailable() {
  static const char* reason = []() -> const char* {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      logger().info("host calls stay on the CPU BLAS: no usable GPU ({})", cudaGetErrorString(e));
      return "no usable GPU";
    }
    if (count == 0) {
      logger().info("host calls stay on the CPU BLAS: no GPU present");
      return "no GPU present";
    }
    const device_list& l = host_devices();
    if (!l.devices.empty()) return nullptr;
    const config& cfg = settings();
    if (!cfg.all_devices && cfg.devices.empty()) {
      logger().warn("OZDGEMM_DEVICE={} but only {} GPU(s): host calls stay on the CPU BLAS",
                    host_device(), count);
      return "OZDGEMM_DEVICE out of range";
    }
    return "OZDGEMM_DEVICES: no listed GPU exists";  // device_select warned
  }();
  return reason;
}

// Sizes an ILP64 caller may pass that the GPU path's 32-bit INT8 GEMMs cannot take.
constexpr const char* kBeyondGpuPath = "beyond the GPU path's 32-bit dimensions";

// Host calls one at a time: they block their caller anyway, and the workers are shared.
std::mutex& host_calls() {
  static auto* m = new std::mutex();
  return *m;
}

// Tells the workers sharing A that worker w will send no more of it (a_share_state).
void retire_from_share(const host_job& j, const host_worker* w) noexcept {
  if (j.share == nullptr) return;
  try {
    j.share->state.retired(j.share->position(w));
  } catch (...) {  // std::mutex::lock throws only for a broken mutex
  }
}

// Runs worker w on j until the queue is empty or w fails (logged: its tiles went back).
void run_worker(host_worker* w, const host_job& j, tile_queue& q, const char* entry) noexcept {
  try {
    device_guard guard(w->device());
    w->serve(j, q);
  } catch (const std::exception& e) {
    try {
      logger().warn(
          "{}: host path worker {} (GPU {}) failed after {} tile(s) ({}); its tiles go "
          "back to the queue and it retires from this call",
          entry, w->index(), w->device(), w->tiles_done(), e.what());
    } catch (...) {
    }
  } catch (...) {
  }
  retire_from_share(j, w);
}

// How the crew shares A (a_share.hpp), or null when no worker would copy a part of A from
// another: one worker, OZDGEMM_HOST_PEER=off, or no two workers on linked GPUs. Asking whether
// GPUs are linked enables their peer access the first time (process-wide).
std::unique_ptr<a_sharing> share_a(const host_gemm& g, const std::vector<host_worker*>& crew,
                                   bool peer) {
  if (crew.size() < 2 || !peer) return nullptr;
  std::vector<int> devices;
  devices.reserve(crew.size());
  for (const host_worker* w : crew) devices.push_back(w->device());
  peer_links& links = process_peer_links();
  a_share_plan plan = plan_a_share(
      devices, g.opa == op_kind::n ? g.k : g.m, [&](int a, int b) { return links.linked(a, b); },
      true);
  int from_host = 0;
  for (size_t w = 0; w < crew.size(); ++w) from_host += plan.owned(static_cast<int>(w));
  if (from_host == static_cast<int>(crew.size()) * plan.segments.count) return nullptr;
  return std::make_unique<a_sharing>(std::move(plan), crew);
}

// The process's registrations of callers' memory (OZDGEMM_HOST_REGISTER), made on first use
// with the settings of that moment; used only under host_calls(). Never destroyed.
registration_cache& host_registrations(const register_setting& s) {
  static registration_cache* cache = [&] {
    const long page = sysconf(_SC_PAGESIZE), pages = sysconf(_SC_PHYS_PAGES);
    const size_t page_bytes = page > 0 ? static_cast<size_t>(page) : 4096;
    const size_t memory = pages > 0 ? static_cast<size_t>(pages) * page_bytes : 0;
    // By default at most a quarter of the memory stays locked: what is locked cannot be paged.
    const size_t cap = s.cap != 0 ? s.cap : memory / 4;
    // Operands under one staging buffer are cheap to stage and not worth a registration.
    return new registration_cache(&cuda_registrar(), page_bytes, kStagingElements * sizeof(double),
                                  cap);
  }();
  return *cache;
}

// Registers what it can of the call's A, B and C for direct copies (host_register.hpp) and says
// which the workers copy directly. C is written directly only when beta = 0 (worker.hpp).
host_direct register_operands(const host_gemm& g, int device, const register_setting& s) {
  registration_cache& cache = host_registrations(s);
  device_guard guard(device);  // the context cudaHostRegister works in: one the host path uses
  const auto t0 = std::chrono::steady_clock::now();
  const bool a_n = g.opa == op_kind::n, b_n = g.opb == op_kind::n;
  const std::vector<bool> d =
      cache.prepare({block_bytes(g.a, g.lda, a_n ? g.m : g.k, a_n ? g.k : g.m),
                     block_bytes(g.b, g.ldb, b_n ? g.k : g.n, b_n ? g.n : g.k),
                     block_bytes(g.c, g.ldc, g.m, g.n)});
  // A pitched copy's pitch is at most cudaDevAttrMaxPitch bytes: a longer leading dimension is
  // staged.
  int max_pitch = 0;
  if (cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, device) != cudaSuccess) {
    (void)cudaGetLastError();
    max_pitch = 0;
  }
  const auto pitch_ok = [&](int64_t ld) {
    return ld <= static_cast<int64_t>(max_pitch) / static_cast<int64_t>(sizeof(double));
  };
  const bool a = d[0] && pitch_ok(g.lda), b = d[1] && pitch_ok(g.ldb), c = d[2] && pitch_ok(g.ldc);
  const registration_cache::counts& n = cache.last();
  if (n.registered + n.refused + n.failed + n.over_cap > 0)
    logger().debug(
        "host path {}x{}x{}: page-locking: {} registered, {} already registered by "
        "the application, {} failed, {} over the cap, in {:.1f} ms; {} MiB locked; "
        "direct: A {}, B {}, C {}",
        g.m, g.n, g.k, n.registered, n.refused, n.failed, n.over_cap,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3,
        cache.registered_bytes() >> 20, a ? "yes" : "no", b ? "yes" : "no", c ? "yes" : "no");
  return host_direct{a, b, g.beta != 0.0 && c, g.beta == 0.0 && c};
}

// Ends the call's registrations once every worker has stopped copying (call mode unregisters).
struct registrations_done {
  const register_setting* s = nullptr;
  int device = 0;
  ~registrations_done() {
    if (s == nullptr) return;
    try {
      device_guard guard(device);
      host_registrations(*s).finish();
    } catch (...) {
    }
  }
};

// Why no GPU can take host calls now (a forked child: CUDA is not fork-safe; no GPU for host
// calls), or null. Native mode says why itself, in its route.
const char* host_path_blocked() {
  if (!cuda_usable_in_this_process()) return cuda_unusable_reason();
  return settings().mode != run_mode::native ? gpu_unavailable() : nullptr;
}

// The route of a host call priced as m x n x k, with the rates of the host path's first GPU
// (native mode consults no GPU: no rates, no prediction); *gpu_label (if not null) names it.
route price_host_call(const char* blocked, int64_t m, int64_t n, int64_t k, bool reads_c,
                      const moduli_outlook* outlook, const char** gpu_label) {
  if (blocked != nullptr) return route{false, blocked, {0.0, 0.0}};
  const config& cfg = settings();
  static const gpu_rates no_rates;
  const gpu_rates* rates = &no_rates;
  const char* cannot = nullptr;
  if (cfg.mode != run_mode::native) {
    const gpu_model& gpu =
        model_of_device(host_devices().devices.front(),
                        consults_model(cfg, m, n, k) ? cfg.calibrate : calibrate_mode::off);
    if (gpu_label != nullptr) *gpu_label = gpu.label.c_str();
    rates = &gpu.rates;
    cannot = gpu.unusable;
  }
  return decide_route(cfg, call_site::host, cannot, m, n, k, reads_c, *rates, 1.0, false, outlook);
}

}  // namespace

route host_gemm_route(int64_t m, int64_t n, int64_t k, bool complex) noexcept {
  try {
    if (m <= 0 || n <= 0 || k <= 0) return route{false, "trivial call", {0.0, 0.0}};
    if (!fits_gpu_path(m, n, k, complex)) return route{false, kBeyondGpuPath, {0.0, 0.0}};
    const int64_t pn = complex ? 2 * n : n, pk = complex ? 2 * k : k;
    return price_host_call(host_path_blocked(), m, pn, pk, true, nullptr, nullptr);
  } catch (...) {
    return route{false, "internal error", {0.0, 0.0}};
  }
}

const char* host_gemm_declines(int64_t m, int64_t n, int64_t k, bool complex) noexcept {
  const route rt = host_gemm_route(m, n, k, complex);
  return rt.emulate ? nullptr : rt.reason;
}

host_offload_result try_host_offload(const host_gemm& g, const char* entry,
                                     host_embedded_call* embedded) noexcept {
  const fp_flags_guard caller_flags;  // the CPU BLAS, where it runs, runs outside this scope
  const auto t0 = std::chrono::steady_clock::now();
  // The caller's shape in the decision line (an embedded call prices another one).
  const int64_t lm = embedded != nullptr ? embedded->m : g.m;
  const int64_t ln = embedded != nullptr ? embedded->n : g.n;
  const int64_t lk = embedded != nullptr ? embedded->k : g.k;
  call_record rec{entry, lm, ln, lk, outcome::native, nullptr, 0, 0.0, 0.0, 0.0};
  host_offload_result result;
  // The one decision line of this call, whatever path it takes.
  struct log_once {
    call_record& r;
    std::chrono::steady_clock::time_point t0;
    ~log_once() {
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      log_call(r);
    }
  } logged{rec, t0};
  try {
    const char* blocked = host_path_blocked();
    const config* cfg = blocked == nullptr ? &settings() : nullptr;
    // Auto mode with a per-call choice: the shape's recent counts price the call (ungated: the
    // workers' choice runs the count it finds), and the count this call's choice finds joins them.
    const bool learns =
        blocked == nullptr && consults_model(*cfg, g.m, g.n, g.k) && cfg->moduli.chooses_per_call();
    const history_key key{g.m, g.n, g.k, embedded != nullptr,
                          learns ? cfg->scaling : scaling_mode::fast,
                          learns ? history_target(*cfg, embedded != nullptr) : 0};
    moduli_outlook outlook;
    if (learns) {
      outlook = process_moduli_history().lookup(key);
      outlook.host_choice = false;
    }
    route rt = price_host_call(blocked, g.m, g.n, g.k, g.beta != 0.0, learns ? &outlook : nullptr,
                               &rec.gpu);
    if (rt.emulate && (g.m == 0 || g.n == 0 || g.k == 0 || g.alpha == 0.0))
      rt = route{false, "trivial call", rt.predicted};
    if (rt.emulate && !fits_gpu_path(lm, ln, lk, embedded != nullptr))  // the caller's shape
      rt = route{false, kBeyondGpuPath, rt.predicted};
    rec.reason = rt.reason;
    rec.predicted_native_ms = rt.predicted.native_ms;
    rec.predicted_emulated_ms = rt.predicted.emulated_ms;
    if (!rt.emulate) return result;
    host_gemm built{};
    if (embedded != nullptr) built = embedded->build();
    const host_gemm& run = embedded != nullptr ? built : g;
    worker_set& set = workers();
    std::lock_guard<std::mutex> lock(host_calls());
    const std::vector<int64_t> widths = tile_widths(
        run.n, cfg->scaling, cfg->moduli.chooses_per_call(), cfg->host_tile, set.count());
    host_job job{&run,
                 cfg->moduli,
                 host_call_target(cfg->accuracy, cfg->moduli, embedded != nullptr),
                 cfg->scaling,
                 *std::max_element(widths.begin(), widths.end()),
                 fail_plan{cfg->host_fail_after, cfg->host_fail_worker}};
    tile_queue q(widths);
    const char* why = nullptr;
    const std::vector<host_worker*> crew =
        admit(set, static_cast<int>(std::min<int64_t>(set.count(), q.tiles())), job, &why);
    if (crew.empty()) {
      rec.result =
          why == kNoWorkers || why == kNoMemoryForWorkers ? outcome::fallback : outcome::native;
      rec.reason = why;
      return result;
    }
    const std::unique_ptr<a_sharing> share = share_a(run, crew, cfg->host_peer);
    job.share = share.get();
    // The caller's own matrices only: an embedded call's buffers are the library's, freed after
    // the call, and must never stay registered.
    registrations_done registered;
    if (embedded == nullptr && cfg->host_register.mode != register_mode::off) {
      registered.s = &cfg->host_register;
      registered.device = crew[0]->device();
      job.direct = register_operands(run, crew[0]->device(), cfg->host_register);
    }
    // Room for the answer before anything is written: once C is partly written, reporting what
    // is left must not fail for want of memory.
    std::vector<tile_queue::tile> unfinished;
    unfinished.reserve(static_cast<size_t>(q.tiles()));
    result.left.reserve(static_cast<size_t>(q.tiles()));

    // From here on nothing throws (run_worker is noexcept, the answer's room is reserved): C
    // may be partly written, and the caller must learn exactly which columns are not.
    std::vector<std::thread> helpers;
    for (size_t i = 1; i < crew.size(); ++i) {
      try {
        helpers.emplace_back(run_worker, crew[i], std::cref(job), std::ref(q), entry);
      } catch (...) {
        // No thread: fewer workers, the queue still hands out every tile, and those sharing A
        // pack the missing workers' parts themselves.
        for (size_t r = i; r < crew.size(); ++r) retire_from_share(job, crew[r]);
        break;
      }
    }
    run_worker(crew[0], job, q, entry);  // the caller's thread is the first worker
    for (std::thread& t : helpers) t.join();

    const char* declined = crew[0]->declined();
    if (learns && (declined == nullptr || declined == kNoModuliMeetsTarget))
      process_moduli_history().record(key, declined == nullptr ? crew[0]->ran_moduli() : 0);
    if (crew[0]->declined() != nullptr) {  // the choice ran no s: C untouched, the CPU BLAS
      result.left.clear();
      try {
        logger().info("{}: auto moduli (target {}): the CPU BLAS does this call: {}", entry,
                      accuracy_target_name(job.target), crew[0]->declined_detail());
      } catch (...) {
      }
      rec.reason = crew[0]->declined();
      return result;
    }
    q.unfinished_into(&unfinished);
    merge_columns_into(unfinished, &result.left);
    if (result.left.empty()) {
      if (embedded != nullptr) embedded->finish();
      result.served = true;
      rec.result = outcome::emulated;
      rec.num_moduli = crew[0]->ran_moduli();
      return result;
    }
    int64_t left_columns = 0;
    for (const column_range& r : result.left) left_columns += r.count;
    // Nothing written (an embedded call writes C only at the end): the caller runs the call as
    // the application made it.
    result.served = embedded == nullptr && left_columns < run.n;
    if (!result.served) result.left.clear();
    try {
      logger().warn("{}: GPU path left {} of {} columns in {} range(s); the CPU BLAS does them",
                    entry, left_columns, run.n, result.served ? result.left.size() : size_t{1});
    } catch (...) {
    }
    rec = call_record{entry, lm, ln, lk, outcome::fallback, "GPU path failed", 0, 0, 0, 0};
    return result;
  } catch (const std::exception& e) {
    try {
      logger().warn("{}: GPU path failed ({}); the CPU BLAS does the call", entry, e.what());
    } catch (...) {
    }
  } catch (...) {
  }
  // Only reached before any worker ran: nothing written.
  result = host_offload_result{};
  rec = call_record{entry, lm, ln, lk, outcome::fallback, "GPU path failed", 0, 0, 0, 0};
  return result;
}

}  // namespace ozdgemm::detail
