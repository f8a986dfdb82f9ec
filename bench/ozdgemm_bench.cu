// Side-by-side FP64 GEMM benchmark, C = A B (alpha = 1, beta = 0, column-major, no transpose):
// native cuBLAS DGEMM, cuBLAS's own FP64 emulation (eager strategy; dynamic and fixed
// mantissa) and ozdgemm for every moduli count x scaling mode, all in one run per shape on the
// same inputs (the method of bench/results/README.md).
//
// Per method: median and min time over CUDA-event-timed calls on one stream (warm-up first,
// adaptive rep count, inputs rotated when a set fits in L2), effective TFLOPS = 2mnk / median,
// speedup over native, the peak ozdgemm workspace, and the errors against a double-double host
// reference on --samples random (i, j) positions. With --stages, a separate instrumented run
// gives the stage split of each ozdgemm configuration. --int8-gemm cublas,lt runs each ozdgemm
// configuration with both INT8 GEMM backends (engine/int8_gemm.hpp), as methods "ozdgemm" and
// "ozdgemm_lt", side by side on the same inputs. --dry-run prints the plan and a time
// estimate without touching the GPU (run_bench.sh budgets its presets with it).
//
// Helpers live in bench/common/: bench_cuda (RAII, timing loop), bench_inputs (inputs,
// reference, errors), bench_methods (cuBLAS emulation set-up, stage split), bench_report
// (system info, CSV, table).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/bench_cuda.hpp"
#include "common/bench_inputs.hpp"
#include "common/bench_methods.hpp"
#include "common/bench_report.hpp"
#include "ozdgemm/ozdgemm.hpp"

namespace {

using namespace ozdgemm::bench;  // NOLINT(build/namespaces): this file is the program

constexpr int kMaxCopies = 64;  // input sets when rotating

// ---------------------------------------------------------------------------------------------
// Command line.

struct bench_args {
  std::vector<shape> shapes{{4096, 4096, 4096}};
  std::vector<int> moduli{14, 16, 18, 20};
  std::vector<scaling_mode> modes{scaling_mode::fast, scaling_mode::accurate};
  // Default: the one OZDGEMM_INT8_GEMM selects (lt unless set).
  std::vector<int8_gemm_backend> gemms{ozdgemm::detail::int8_gemm_setting()};
  double phi = 0.5;
  timing_policy timing;
  int stage_reps = 5;
  std::string csv;
  bool append = false;
  bool stages = false;
  bool cublas_emu = false;
  std::vector<int> emu_bits{55};
  int samples = 1024;
  uint64_t seed = 1;
  bool dry_run = false;
};

constexpr const char* kUsage =
    "usage: ozdgemm_bench [options]\n"
    "  --shapes 4096,8192x8192x4096   square n or MxNxK, comma-separated (default 4096)\n"
    "  --moduli 14,16,8-12            moduli counts, lists and ranges (default 14,16,18,20)\n"
    "  --modes fast,accurate          ozdgemm scaling modes (default both)\n"
    "  --int8-gemm cublas,lt          ozdgemm's INT8 GEMM backends, one row each (default:\n"
    "                                 OZDGEMM_INT8_GEMM's, lt unless set); lt rows are\n"
    "                                 method ozdgemm_lt in the CSV\n"
    "  --phi 0.5                      inputs (U-0.5)*exp(phi*N(0,1))\n"
    "  --reps N                       timed calls per method (default adaptive)\n"
    "  --target-ms 1000 --min-reps 5 --max-reps 50\n"
    "                                 adaptive reps: about target-ms of timed work, clamped\n"
    "  --warmup 2                     untimed calls first (adaptive: at least 1)\n"
    "  --[no-]stages                  instrumented stage split per ozdgemm config (off)\n"
    "  --stage-reps 5                 instrumented runs per config (median, after 1 warm-up)\n"
    "  --[no-]cublas-emu              cuBLAS FP64 emulation, eager, dynamic + fixed (off)\n"
    "  --emu-bits 55[,40]             fixed-mantissa bit counts for --cublas-emu\n"
    "  --samples 1024                 sampled (i,j) entries for the errors\n"
    "  --seed 1\n"
    "  --csv FILE [--append]          one row per shape x method; --append keeps FILE's rows\n"
    "  --dry-run                      print the plan and a time estimate; no GPU needed\n"
    "  later flags override earlier ones\n";

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "ozdgemm_bench: %s\n%s", msg.c_str(), kUsage);
  std::exit(EXIT_FAILURE);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

int64_t parse_int(const std::string& s, int64_t lo, int64_t hi, const char* what) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end == nullptr || *end != '\0' || errno != 0 || v < lo || v > hi)
    usage_error(std::string("bad ") + what + " '" + s + "' (want an integer in [" +
                std::to_string(lo) + ", " + std::to_string(hi) + "])");
  return v;
}

double parse_double(const std::string& s, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == nullptr || *end != '\0' || !std::isfinite(v))
    usage_error(std::string("bad ") + what + " '" + s + "'");
  return v;
}

// "8-12,14" -> 8 9 10 11 12 14.
std::vector<int> parse_int_list(const std::string& s, int lo, int hi, const char* what) {
  std::vector<int> out;
  for (const auto& item : split(s, ',')) {
    const std::vector<std::string> r = split(item, '-');
    if (r.size() == 2) {
      const int a = static_cast<int>(parse_int(r[0], lo, hi, what));
      const int b = static_cast<int>(parse_int(r[1], lo, hi, what));
      if (a > b) usage_error(std::string("bad ") + what + " range '" + item + "'");
      for (int v = a; v <= b; ++v) out.push_back(v);
    } else {
      out.push_back(static_cast<int>(parse_int(item, lo, hi, what)));
    }
  }
  return out;
}

// cublasDgemm takes int sizes.
shape parse_shape(const std::string& s) {
  const std::vector<std::string> parts = split(s, 'x');
  if (parts.size() == 1) {
    const int64_t n = parse_int(parts[0], 1, INT_MAX, "shape");
    return shape{n, n, n};
  }
  if (parts.size() != 3) usage_error("bad shape '" + s + "' (want n or MxNxK)");
  return shape{parse_int(parts[0], 1, INT_MAX, "shape M"),
               parse_int(parts[1], 1, INT_MAX, "shape N"),
               parse_int(parts[2], 1, INT_MAX, "shape K")};
}

bench_args parse_args(int argc, char** argv) {
  bench_args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(EXIT_SUCCESS);
    } else if (flag == "--shapes") {
      a.shapes.clear();
      for (const auto& s : split(value(), ',')) a.shapes.push_back(parse_shape(s));
    } else if (flag == "--moduli") {
      a.moduli = parse_int_list(value(), 2, 20, "moduli count");
    } else if (flag == "--modes") {
      a.modes.clear();
      for (const auto& s : split(value(), ',')) {
        if (s == "fast") {
          a.modes.push_back(scaling_mode::fast);
        } else if (s == "accurate") {
          a.modes.push_back(scaling_mode::accurate);
        } else {
          usage_error("bad mode '" + s + "' (want fast or accurate)");
        }
      }
    } else if (flag == "--int8-gemm") {
      a.gemms.clear();
      for (const auto& s : split(value(), ',')) {
        int8_gemm_backend b = int8_gemm_backend::cublas;
        if (!ozdgemm::detail::parse_int8_gemm_backend(s.c_str(), &b))
          usage_error("bad INT8 GEMM backend '" + s + "' (want cublas or lt)");
        if (std::find(a.gemms.begin(), a.gemms.end(), b) == a.gemms.end()) a.gemms.push_back(b);
      }
    } else if (flag == "--phi") {
      a.phi = parse_double(value(), "phi");
    } else if (flag == "--reps") {
      a.timing.reps = static_cast<int>(parse_int(value(), 1, 1000, "reps"));
    } else if (flag == "--target-ms") {
      a.timing.target_ms = parse_double(value(), "target-ms");
    } else if (flag == "--min-reps") {
      a.timing.min_reps = static_cast<int>(parse_int(value(), 1, 1000, "min-reps"));
    } else if (flag == "--max-reps") {
      a.timing.max_reps = static_cast<int>(parse_int(value(), 1, 1000, "max-reps"));
    } else if (flag == "--warmup") {
      a.timing.warmup = static_cast<int>(parse_int(value(), 0, 1000, "warmup"));
    } else if (flag == "--stage-reps") {
      a.stage_reps = static_cast<int>(parse_int(value(), 1, 1000, "stage-reps"));
    } else if (flag == "--csv") {
      a.csv = value();
    } else if (flag == "--append") {
      a.append = true;
    } else if (flag == "--stages" || flag == "--no-stages") {
      a.stages = flag == "--stages";
    } else if (flag == "--cublas-emu" || flag == "--no-cublas-emu") {
      a.cublas_emu = flag == "--cublas-emu";
    } else if (flag == "--emu-bits") {
      a.emu_bits = parse_int_list(value(), 1, 1000, "emu-bits");
    } else if (flag == "--samples") {
      a.samples = static_cast<int>(parse_int(value(), 1, 1 << 20, "samples"));
    } else if (flag == "--seed") {
      a.seed = static_cast<uint64_t>(parse_int(value(), 0, LLONG_MAX, "seed"));
    } else if (flag == "--dry-run") {
      a.dry_run = true;
    } else {
      usage_error("unknown argument '" + flag + "'");
    }
  }
  if (a.shapes.empty() || a.moduli.empty() || a.modes.empty() || a.gemms.empty())
    usage_error("--shapes, --moduli, --modes and --int8-gemm need at least one value");
  if (a.timing.min_reps > a.timing.max_reps) usage_error("--min-reps exceeds --max-reps");
  return a;
}

std::string shape_name(const shape& sh) {
  return std::to_string(sh.m) + "x" + std::to_string(sh.n) + "x" + std::to_string(sh.k);
}

// The methods in run order; native first (the others' ratios refer to it). cuBLAS handles are
// attached by run().
std::vector<method> plan_methods(const bench_args& args) {
  std::vector<method> out;
  out.push_back(method{method_kind::native, "cublas_dgemm", 0, scaling_mode::accurate, nullptr});
  if (args.cublas_emu) {
    out.push_back(
        method{method_kind::cublas_emu, "cublas_emu_dynamic", 0, scaling_mode::accurate, nullptr});
    for (int bits : args.emu_bits)
      out.push_back(method{method_kind::cublas_emu, "cublas_emu_fixed" + std::to_string(bits), 0,
                           scaling_mode::accurate, nullptr});
  }
  for (scaling_mode mode : args.modes)
    for (int s : args.moduli)
      for (int8_gemm_backend gemm : args.gemms)
        out.push_back(method{method_kind::ozdgemm, ozdgemm_method_name(gemm), s, mode, nullptr,
                             gemm});
  return out;
}

// ---------------------------------------------------------------------------------------------
// Time model for --dry-run, from the H200 numbers of the first measured run, rounded to the
// pessimistic side: native DGEMM 55 TFLOPS; cuBLAS emulation 0.35x (dynamic) and 0.5x (fixed) of
// native; ozdgemm s INT8 GEMMs at 1.1 POPS plus an HBM pass (3 TB/s) over the FP64 operands (3x)
// and the INT32 products (2x), plus 0.1 ms of launches. Per shape: inputs and the host reference
// (~3 ns per sampled term).

double model_call_ms(const method& me, const shape& sh) {
  const double flops = gemm_flops(sh);
  const double native = flops / 55e12 * 1e3;
  switch (me.kind) {
    case method_kind::native:
      return native;
    case method_kind::cublas_emu:
      return native / (me.name == "cublas_emu_dynamic" ? 0.35 : 0.5);
    case method_kind::ozdgemm: {
      const double bytes = 3.0 * 8.0 * (double(sh.m) * sh.k + double(sh.k) * sh.n) +
                           2.0 * 4.0 * me.moduli * double(sh.m) * sh.n;
      return (me.moduli * flops / 1.1e15 + bytes / 3e12) * 1e3 + 0.1;
    }
  }
  return native;
}

double model_method_s(const method& me, const shape& sh, const bench_args& args) {
  const double call = model_call_ms(me, sh);
  const int warm = args.timing.reps > 0 ? args.timing.warmup : std::max(args.timing.warmup, 1);
  int calls = warm + adaptive_reps(args.timing, call) + 1;  // + the accuracy call
  if (me.kind == method_kind::ozdgemm && args.stages) calls += args.stage_reps + 1;
  return calls * call * 1e-3 + 0.02;  // + host work between methods
}

double model_shape_overhead_s(const shape& sh, const bench_args& args) {
  return 0.5 + 3e-9 * double(args.samples) * double(sh.k) + set_bytes(sh) / 1e12;
}

int dry_run(const bench_args& args) {
  const std::vector<method> methods = plan_methods(args);
  std::printf("ozdgemm_bench --dry-run: %zu shapes x %zu methods, phi %g (modelled H200 times)\n",
              args.shapes.size(), methods.size(), args.phi);
  double total = 0.0;
  for (const shape& sh : args.shapes) {
    double t = model_shape_overhead_s(sh, args);
    double ws_max = 0.0;
    for (const method& me : methods) {
      t += model_method_s(me, sh, args);
      if (me.kind == method_kind::ozdgemm)
        ws_max = std::max(ws_max,
                          double(ozdgemm_workspace_bytes(sh, me.moduli, me.mode, me.gemm)));
    }
    std::printf("  %-20s ~%7.1f s  native call ~%.3f ms; inputs %.0f MB; ozdgemm workspace "
                "<= %.0f MB\n",
                shape_name(sh).c_str(), t, model_call_ms(methods[0], sh), set_bytes(sh) / 1e6,
                ws_max / 1e6);
    total += t;
  }
  std::printf("estimated total: %.0f s\n", total);
  return EXIT_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// The measured run.

struct bench_context {
  const bench_args& args;
  const system_info& si;
  cudaStream_t stream;
  const event_pool& events;
  cublasHandle_t native;         // default math mode; also the caller handle for ozdgemm
  cublasHandle_t stage_private;  // private INT8 handle for the instrumented runs
  std::vector<method> methods;
  csv_writer* csv;
  std::chrono::steady_clock::time_point start;
  int done = 0, total = 0;  // (shape, method) pairs, for the progress lines
};

// "[12/87 34.5 s]" at the head of a progress line on stderr.
void progress(const bench_context& cx, const shape& sh, const std::string& what) {
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - cx.start).count();
  std::fprintf(stderr, "[%d/%d %.1f s] %s %s ...", cx.done + 1, cx.total, s,
               shape_name(sh).c_str(), what.c_str());
  std::fflush(stderr);
}

// Runs every method on one shape. Throws if the inputs cannot be made.
void run_shape(const shape& sh, bench_context& cx) {
  const bench_args& args = cx.args;
  const cudaStream_t stream = cx.stream;
  const int m = static_cast<int>(sh.m), n = static_cast<int>(sh.n), k = static_cast<int>(sh.k);

  int ncopies = copies_for(sh, cx.si.l2_bytes, kMaxCopies);
  std::vector<input_set> sets;
  try {
    for (int c = 0; c < ncopies; ++c)
      sets.push_back(make_input_set(sh, args.seed, c, args.phi, stream));
    OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream));
  } catch (const ozdgemm::cuda_error& e) {
    if (e.code != cudaErrorMemoryAllocation || sets.empty()) throw;
    // Fewer copies than wanted still rotate; say how many.
    recover(stream);
    std::fprintf(stderr, "ozdgemm_bench: only %zu input copies fit in memory\n", sets.size());
    ncopies = static_cast<int>(sets.size());
  }
  const bool rotated = ncopies > 1;
  char rot[160];
  std::snprintf(rot, sizeof rot, "%s (one set %.1f MB, 3 x L2 %.1f MB)",
                rotated ? ("inputs rotated over " + std::to_string(ncopies) + " copies").c_str()
                        : "no input rotation",
                set_bytes(sh) / 1e6, 3.0 * cx.si.l2_bytes / 1e6);
  std::fprintf(stderr, "[%s] %s; computing the sampled reference...\n", shape_name(sh).c_str(),
               rot);
  samples smp = make_samples(sh, sets[0], args.samples, args.seed, stream);

  const double one = 1.0, zero = 0.0;
  std::vector<result_row> rows;
  std::vector<double> native_samples;
  double native_ms = kNaN;

  for (const method& me : cx.methods) {
    result_row row;
    row.sh = sh;
    row.phi = args.phi;
    row.me = me;
    row.samples = args.samples;
    row.rotated = rotated;
    row.copies = ncopies;
    const bool is_oz = me.kind == method_kind::ozdgemm;
    ozdgemm::options opts;
    opts.num_moduli = me.moduli;
    opts.scaling =
        me.mode == scaling_mode::fast ? ozdgemm::scaling::fast : ozdgemm::scaling::accurate;
    if (is_oz) {
      row.workspace_bytes = double(ozdgemm_workspace_bytes(sh, me.moduli, me.mode, me.gemm));
      // ozdgemm::dgemm reads the process-wide backend (the engine's; this program is single-
      // threaded and no call is in flight here).
      ozdgemm::detail::set_int8_gemm_setting(me.gemm);
    }

    auto enqueue = [&](int copy) -> std::string {
      const input_set& in = sets[copy];
      if (is_oz) {
        const ozdgemm::status st =
            ozdgemm::dgemm(cx.native, CUBLAS_OP_N, CUBLAS_OP_N, sh.m, sh.n, sh.k, &one, in.a.get(),
                           sh.m, in.b.get(), sh.k, &zero, in.c.get(), sh.m, opts);
        return st == OZDGEMM_STATUS_SUCCESS
                   ? ""
                   : std::string("ozdgemm::dgemm: ") + ozdgemm::to_string(st);
      }
      const cublasStatus_t st = cublasDgemm(me.handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one,
                                            in.a.get(), m, in.b.get(), k, &zero, in.c.get(), m);
      return st == CUBLAS_STATUS_SUCCESS ? ""
                                         : std::string("cublasDgemm: ") + cublasGetStatusString(st);
    };

    progress(cx, sh, label(me));
    try {
      row.time = time_calls(enqueue, ncopies, args.timing, stream, cx.events);
      if (row.time.error.empty()) {
        // Accuracy on input set 0, into a C filled with NaN (all bits set): an entry the
        // method does not write shows up as a NaN error rather than a stale value.
        OZDGEMM_CUDA_TRY(
            cudaMemsetAsync(sets[0].c.get(), 0xFF, sh.m * sh.n * sizeof(double), stream));
        const std::string err = enqueue(0);
        if (err.empty()) {
          const std::vector<double> got = read_samples(sh, sets[0].c.get(), smp, stream);
          row.err = sampled_errors(got, smp.ref);
          if (me.kind == method_kind::native) {
            native_samples = got;
          } else if (me.kind == method_kind::cublas_emu && got == native_samples) {
            row.note = "bit-identical to native on all samples: emulation probably not used";
          }
        } else {
          row.time.error = err;
          recover(stream);
        }
      }
    } catch (const std::exception& e) {
      // An asynchronous failure surfacing at a synchronisation: keep the row, go on (a sticky
      // error will fail the following methods the same way, each with its row).
      row.time.error = e.what();
      recover(stream);
    }
    if (!row.time.error.empty()) {
      row.time.median_ms = row.time.min_ms = kNaN;
      row.note = row.time.error;
      std::fprintf(stderr, " FAILED: %s\n", row.time.error.c_str());
    } else {
      std::fprintf(stderr, " median %.3f ms, min %.3f ms over %d reps, max rel err %.2e\n",
                   row.time.median_ms, row.time.min_ms, row.time.reps, row.err.max_rel);
    }
    row.tflops = gemm_flops(sh) / (row.time.median_ms * 1e-3) / 1e12;
    if (me.kind == method_kind::native) native_ms = row.time.median_ms;
    row.ratio = native_ms / row.time.median_ms;

    if (is_oz) {
      // Free the library's cached workspace before the instrumented run makes its own.
      // The pool behind its cudaFreeAsync returns memory to the device at a synchronisation.
      ozdgemm_release_handle(cx.native);
      recover(stream);
      if (args.stages) {
        progress(cx, sh, label(me) + " stage split");
        row.stages = measure_stages(sh, sets[0], me.moduli, me.mode, me.gemm, args.stage_reps,
                                    stream, cx.stage_private);
        if (row.stages.error.empty()) {
          std::fprintf(stderr, " prep %.3f ms, gemm %.3f ms, reduction fused, crt %.3f ms\n",
                       row.stages.prep, row.stages.gemm, row.stages.crt);
        } else {
          std::fprintf(stderr, " FAILED: %s\n", row.stages.error.c_str());
          if (!row.note.empty()) row.note += "; ";
          row.note += "stages failed: " + row.stages.error;
        }
      }
    }
    if (cx.csv != nullptr) cx.csv->write(row);
    rows.push_back(row);
    ++cx.done;
  }
  print_table(sh, rows, rot, args.samples, args.stages);
}

int run(const bench_args& args) {
  int ndev = 0;
  const cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "ozdgemm_bench: no CUDA device (%s); nothing to measure\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return EXIT_FAILURE;
  }
  const system_info si = query_system();
  std::printf(
      "ozdgemm_bench: %s (sm_%d%d, %d SMs, L2 %.1f MB), driver %s, CUDA runtime %s, "
      "cuBLAS %s, %s\n",
      si.gpu.c_str(), si.cc_major, si.cc_minor, si.sm_count, si.l2_bytes / 1e6, si.driver.c_str(),
      si.cuda_runtime.c_str(), si.cublas_version.c_str(), si.date.c_str());
  const timing_policy& tp = args.timing;
  std::printf(
      "inputs: (U-0.5)*exp(%.3g*N(0,1)), seed %llu, column-major, alpha=1 beta=0; "
      "time = CUDA events on one stream, %s reps after %d warm-up; "
      "errors are SAMPLED at %d random (i,j) against a double-double reference\n",
      args.phi, static_cast<unsigned long long>(args.seed),
      tp.reps > 0 ? std::to_string(tp.reps).c_str()
                  : ("adaptive (" + std::to_string(tp.min_reps) + ".." +
                     std::to_string(tp.max_reps) + ", ~" + std::to_string(int(tp.target_ms)) +
                     " ms)")
                        .c_str(),
      tp.reps > 0 ? tp.warmup : std::max(tp.warmup, 1), args.samples);

  // Declaration order is teardown order in reverse: handles go before the stream they use.
  cuda_stream stream;
  event_pool events(static_cast<size_t>(std::max(tp.reps, tp.max_reps)) + 1);
  cublas_handle native(stream.get());
  cublas_handle stage_private(stream.get());
  std::vector<std::unique_ptr<cublas_handle>> emu_handles;

  std::unique_ptr<csv_writer> csv;
  if (!args.csv.empty()) csv = std::make_unique<csv_writer>(args.csv, args.append, si);

  bench_context cx{args, si, stream.get(), events, native.get(), stage_private.get(), {},
                   csv.get(), std::chrono::steady_clock::now()};
  for (method me : plan_methods(args)) {
    if (me.kind == method_kind::native) {
      me.handle = native.get();
    } else if (me.kind == method_kind::cublas_emu) {
      emu_handles.push_back(std::make_unique<cublas_handle>(stream.get()));
      me.handle = emu_handles.back()->get();
      const bool fixed = me.name != "cublas_emu_dynamic";
      const int bits = fixed ? std::atoi(me.name.c_str() + std::string("cublas_emu_fixed").size())
                             : 0;
      const std::string why = configure_cublas_emulation(me.handle, fixed, bits);
      if (!why.empty()) {
        std::printf("skipping %s: %s\n", me.name.c_str(), why.c_str());
        continue;
      }
    }
    cx.methods.push_back(me);
  }
  cx.total = static_cast<int>(args.shapes.size() * cx.methods.size());

  int failed = 0;
  for (const shape& sh : args.shapes) {
    try {
      run_shape(sh, cx);
    } catch (const std::exception& ex) {
      ++failed;
      std::fprintf(stderr, "\nozdgemm_bench: shape %s failed: %s\n", shape_name(sh).c_str(),
                   ex.what());
      std::printf("\n== %s: FAILED (%s)\n", shape_name(sh).c_str(), ex.what());
      recover(stream.get());
    }
  }
  OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  if (failed > 0) std::fprintf(stderr, "ozdgemm_bench: %d shape(s) failed\n", failed);
  return failed > 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  const bench_args args = parse_args(argc, argv);
  try {
    return args.dry_run ? dry_run(args) : run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ozdgemm_bench: fatal: %s\n", e.what());
    return EXIT_FAILURE;
  }
}
