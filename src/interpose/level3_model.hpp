// Auto mode's say on a whole Level-3 call, for the cuBLAS and the CPU BLAS hooks alike: the
// blocked form priced with the GEMM routes of the call's site (level3/priced.hpp).
#pragma once

#include <cstdint>

#include "dispatch/call_log.hpp"
#include "dispatch/decision.hpp"
#include "dispatch/settings.hpp"
#include "level3/priced.hpp"

namespace ozdgemm::detail {

struct level3_plan {
  const char* declined;   // why the whole call stays native, or nullptr: it may split
  int64_t block;          // the executors' block order
  bool triangle = false;  // runs as one emulation of its triangle (level3/priced.hpp)
};

// Auto mode prices the blocked form at OZDGEMM_LEVEL3_BLOCK, or when that is not set at each
// order of kLevel3Blocks and the triangle where the caller allows it, and keeps the cheapest; the
// call stays native when that form is not predicted faster than the native routine by
// OZDGEMM_AUTO_MARGIN, although some block of it would be emulated. Emulate mode splits wherever it
// can, at OZDGEMM_LEVEL3_BLOCK or else at the cheapest order whose form splits (its GEMM blocks
// priced emulated): forcing the emulation should not also force a block order that makes the call
// slower, and on a GPU with strong FP64 the large orders are much faster (kDefaultLevel3Block where
// the model has no times). Native mode never splits. The executors then split at the plan's block
// as their GEMM routes say. route_of(m, n, k): the route of a GEMM of that shape at the call's
// site, running nothing. rec gets the two predictions when x was priced. efficiency: how fast the
// native routines run on the call's GPU (dispatch/level3_efficiency.hpp). triangle: the call may
// run as one emulation of its triangle (the device hook's SYRK, HERK and SYRKX, level3/priced.hpp's
// cheapest_form); with OZDGEMM_LEVEL3_BLOCK set it never does.
template <class Call, class RouteOf>
level3_plan plan_level3(const Call& x, const config& cfg, RouteOf&& route_of, call_record* rec,
                        const native_efficiency& efficiency = {}, bool triangle = false) {
  if (cfg.mode == run_mode::native || (cfg.mode == run_mode::emulate && cfg.level3_block > 0))
    return {nullptr, cfg.level3_block > 0 ? cfg.level3_block : kDefaultLevel3Block};
  const gemm_quoter quote = [&](int64_t m, int64_t n, int64_t k) {
    const route rt = route_of(m, n, k);
    const char* declined = rt.emulate ? nullptr : rt.reason != nullptr ? rt.reason : "native";
    return gemm_quote{declined, rt.predicted.native_ms, rt.predicted.emulated_ms};
  };
  const int64_t set[] = {cfg.level3_block};
  // Emulate mode takes the triangle wherever it emulates: it leaves nothing to the native routine.
  const bool forced = cfg.mode == run_mode::emulate;
  const level3_price p = cfg.level3_block > 0
                             ? cheapest_blocked(x, set, quote, efficiency)
                             : cheapest_form(x, kLevel3Blocks, quote, efficiency, triangle, forced);
  // The executors would come to the same reason; saying it here spares asking the GEMM route of
  // the top block again, which a small call would feel.
  if (!p.splits) return {p.why, p.block};
  rec->predicted_native_ms = p.native_ms;
  rec->predicted_emulated_ms = p.blocked_ms;
  if (cfg.mode == run_mode::emulate)
    return {nullptr, p.blocked_ms > 0.0 || p.triangle ? p.block : kDefaultLevel3Block, p.triangle};
  if (p.pays(cfg.auto_margin)) return {nullptr, p.block, p.triangle};
  return {"auto: model predicts the native routine faster than the blocked form", p.block};
}

}  // namespace ozdgemm::detail
