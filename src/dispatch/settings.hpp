// Settings of the interposition layer, read once from the environment on first use (never at
// load time). An invalid value gets one warning naming the variable and the value, then the
// default; nothing here can fail.
//
//   OZDGEMM_MODE          auto | emulate | native                    (auto)
//   OZDGEMM_MODULI        2..20 | auto | certified                    (14)
//                         auto: per call, the smallest s whose predicted error meets
//                         OZDGEMM_ACCURACY (docs/accuracy.md); native cublasDgemm (host-memory
//                         calls: the CPU BLAS) when none does. certified: the same on a proven
//                         per-element bound (docs/certified.md)
//   OZDGEMM_ACCURACY      native | max | bits 1..200: auto's target     (native)
//   OZDGEMM_SCALING       fast | accurate                             (accurate)
//   OZDGEMM_LOG_LEVEL     off | error | warn | info | debug | trace   (warn; src/common/logging)
//   OZDGEMM_LOG_FILE      path                                        (stderr; src/common/logging)
//   OZDGEMM_CPU_BLAS      CPU BLAS library for host calls not emulated (next definition in the
//                         process, else libblas.so.3)
//   OZDGEMM_DEVICE        GPU ordinal used for host calls             (unset: the launcher's
//                         local rank mod the GPU count, else 0; dispatch/device_select)
//   OZDGEMM_AUTO_MARGIN   auto mode emulates only if predicted time < (1 - margin) x native
//                         (0.05)
//   OZDGEMM_MIN_DIM       auto mode never emulates when min(m, n, k) is below this (256)
//   OZDGEMM_HOST_THREADS  threads that pack host operands for the GPU(s), all host-path
//                         workers together (min(cores, 16 x GPUs))
//   OZDGEMM_HOST_TILE     columns of C per pipelined tile on the host path (0: chosen by size)
//   OZDGEMM_LEVEL3_BLOCK  order of the diagonal blocks the Level-3 routines leave native
//   OZDGEMM_MAX_WORKSPACE largest emulation workspace per handle and device, bytes with an
//                         optional K, M or G suffix (powers of 1024); a call needing more runs
//                         natively. 0 = no cap                         (0)
//   OZDGEMM_DEVICES       GPUs that share host calls: all | a comma list of ordinals, repeats
//                         allowed (unset: the one GPU of OZDGEMM_DEVICE's rule)
//   OZDGEMM_HOST_WORKERS_PER_DEVICE  host-path workers per listed GPU, 1..16 (1); more than 1
//                         is for tests and measurements
//   OZDGEMM_HOST_PEER     on | off: host-path workers pack A once among GPUs with peer access
//                         and copy it GPU to GPU (on), or each packs all of A (off)
//   OZDGEMM_HOST_REGISTER off | call[:bytes]: page-lock the caller's matrices for the host
//                         path's copies: never (off) or for the call; at most bytes at once (a
//                         quarter of memory)
//   OZDGEMM_HOST_FAIL_AFTER  test-only: tiles[@worker]; that host-path worker (every one
//                         without @) fails in the tile after its first `tiles`, part way
//                         through writing it (unset)
//   OZDGEMM_PROCS_PER_GPU processes sharing each GPU, 1..65536, for the free-memory share of
//                         the workspaces (unset: from the launcher's local size;
//                         dispatch/device_select)
//   OZDGEMM_CALIBRATE     auto | off | force: auto mode's rates per GPU, measured on first use
//                         and cached (auto), the published prior only (off), or measured again
//                         (force); dispatch/gpu_model.hpp                      (auto)
//   OZDGEMM_CUBLASLT      on | off: serve FP64 cublasLtMatmul calls taken through the audit
//                         module (on; interpose/lt_matmul.cpp)
//   OZDGEMM_POINTER_BATCHES  on | off: serve pointer-array cuBLAS batches through packed
//                         copies (on; engine/packed_batch.hpp)
//   OZDGEMM_INT8_GEMM     lt | cublas: the INT8 GEMMs' backend (lt; engine/int8_gemm.hpp,
//                         which reads it, once, for this file and for the C API alike)
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/moduli_choice.hpp"
#include "core/moduli_setting.hpp"
#include "core/scaling_rules.hpp"
#include "dispatch/gpu_model.hpp"
#include "engine/int8_gemm.hpp"
#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::detail {

enum class run_mode { automatic, emulate, native };

// OZDGEMM_HOST_REGISTER (host_path/host_register.hpp): page-lock the caller's matrices never or
// for the call.
enum class register_mode { off, call };
struct register_setting {
  register_mode mode = register_mode::off;
  size_t cap = 0;  // bytes; 0: a quarter of the physical memory
};

struct config {
  run_mode mode = run_mode::automatic;
  moduli_setting moduli = moduli_setting::certified();  // OZDGEMM_DEFAULT_MODULI
  accuracy_target accuracy{};  // the target of a per-call choice (OZDGEMM_ACCURACY)
  scaling_mode scaling = scaling_mode::fast;  // ozdgemm_default_options()
  std::string cpu_blas;  // empty: default search
  int device = -1;  // -1: unset (dispatch/device_select picks the GPU)
  double auto_margin = 0.05;
  long long min_dim = 256;
  int host_threads = 0;        // 0: chosen from the hardware
  long long host_tile = 0;     // 0: chosen by size
  // Order up to which a Level-3 block runs natively; 0: chosen per call (level3/priced.hpp).
  long long level3_block = 0;
  size_t max_workspace = 0;    // bytes; 0 = no cap (engine/handle_context.hpp)

  // Multi-GPU host path (host_path/offload.cpp). devices empty and all_devices false:
  // the single GPU of dispatch/device_select's rule.
  std::vector<int> devices;
  bool all_devices = false;
  bool serve_cublaslt = true;  // OZDGEMM_CUBLASLT
  // OZDGEMM_POINTER_BATCHES: pointer-array batches served through packed copies
  // (engine/packed_batch.hpp).
  bool pointer_batches = true;
  int host_workers_per_device = 1;
  // OZDGEMM_HOST_PEER: workers on linked GPUs send A to each other (host_path/a_share.hpp).
  bool host_peer = false;
  register_setting host_register;
  // Test-only fault of the host path's workers: -1 = none; worker -1 = every worker.
  long long host_fail_after = -1;
  int host_fail_worker = -1;
  // Processes sharing each GPU (dispatch/device_select.hpp); 0: unset (the launcher's count).
  int procs_per_gpu = 0;
  // OZDGEMM_CALIBRATE: how auto mode's performance model gets each GPU's rates.
  calibrate_mode calibrate = calibrate_mode::automatic;
  // OZDGEMM_INT8_GEMM, as the engine resolved it (never `setting`).
  int8_gemm_backend int8_gemm = int8_gemm_backend::cublas;
};

// OZDGEMM_DEVICES's syntax: "all" (*all = true), or a comma list of GPU ordinals 0..1023 with
// no spaces, signs or empty entries. Repeats are kept: each entry is one share of the workers.
// False, leaving the outputs alone, for anything else. Pure; unit-tested in tests/cpu.
bool parse_device_list(const char* s, std::vector<int>* devices, bool* all);

// OZDGEMM_HOST_FAIL_AFTER's syntax: "tiles" or "tiles@worker", both integers >= 0; worker -1
// when absent. False, leaving the outputs alone, for anything else.
bool parse_fail_after(const char* s, long long* tiles, int* worker);

// OZDGEMM_HOST_REGISTER's syntax: `off` or `call`, optionally followed by `:` and a
// byte count with an optional K, M or G suffix (powers of 1024), at least 4096: the cap. False,
// leaving *out alone, for anything else.
bool parse_register_setting(const char* s, register_setting* out);

const config& settings();

// The C API's options for these settings: the moduli setting, the scaling and the target.
ozdgemm_options_t api_options(const config& c);

// True once settings() has been read, i.e. once the interposition layer is in use (its first
// intercepted call). Code that the C API reaches too (the engine's memory share, through
// device_select's gpu_sharers) checks it so that a process using only the C API is left as the
// environment table promises: untouched by OZDGEMM_* settings. Never throws.
bool settings_loaded() noexcept;

const char* to_string(run_mode m);

}  // namespace ozdgemm::detail
