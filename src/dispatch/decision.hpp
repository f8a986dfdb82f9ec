// The route of one intercepted call: the emulation or the native routine. The one place that
// decides, for device calls (the cuBLAS hooks) and host calls (the host path) alike; the
// caller logs the outcome once (call_log.hpp).
#pragma once

#include <cstdint>

#include "core/moduli_choice.hpp"
#include "dispatch/performance_model.hpp"
#include "dispatch/settings.hpp"
#include "engine/moduli_history.hpp"

namespace ozdgemm::detail {

enum class call_site { device, host };

// Auto mode's say on the count a per-call choice returns (core/moduli_choice.hpp): the count
// runs when the model predicts its emulation faster than the native routine by the margin. The
// choice is paid by then, so its cost does not count. Inactive (every count runs) outside auto
// mode and for fixed counts.
class count_gate final : public moduli_gate {
 public:
  count_gate() = default;
  // native_ms: the model's native time of the call; rates outlive the call (gpu_model.hpp).
  count_gate(call_site site, int64_t m, int64_t n, int64_t k, scaling_mode mode, bool reads_c,
             bool karatsuba, const gpu_rates& rates, double native_ms, double margin)
      : site_(site),
        m_(m),
        n_(n),
        k_(k),
        mode_(mode),
        reads_c_(reads_c),
        karatsuba_(karatsuba),
        rates_(&rates),
        native_ms_(native_ms),
        margin_(margin) {}
  bool runs(int s) const override;
  bool active() const { return rates_ != nullptr; }
  // The model's time of the emulation at s, the choice excluded, in ms.
  double emulated_ms(int s) const;

 private:
  call_site site_ = call_site::device;
  int64_t m_ = 0, n_ = 0, k_ = 0;
  scaling_mode mode_ = scaling_mode::fast;
  bool reads_c_ = false, karatsuba_ = false;
  const gpu_rates* rates_ = nullptr;
  double native_ms_ = 0.0, margin_ = 0.0;
};

struct route {
  bool emulate;
  const char* reason;    // static string, for the decision line and the exit summary
  prediction predicted;  // zero when the call was blocked
  count_gate gate{};     // pass to the engine with an emulated per-call choice
  bool priced = false;   // auto mode's model decided (past the size floor)
  bool engine = false;   // a batch priced as one run of the batched engine (batch_route)
};

// Auto mode's rule for a shape the history has no count for: priced at its family's recent
// counts where there are any; before the process's first choice of the family, the choice is
// tried once when the emulation at kExploreModuli, the smallest count the default returned on
// the H200's sets (docs/certified.md), would pay for it; the gate then keeps a slower count from
// running. A shape whose counts say native is tried again every kRetryEvery calls, in case its
// data changed.
inline constexpr int kExploreModuli = 14;
inline constexpr uint32_t kRetryEvery = 64;

// blocked: why emulation cannot serve this call at all (no CUDA in this process, a handle
// state the emulation does not serve, a GPU it cannot run on, no GPU for host calls), or null.
// Otherwise the mode rules: native mode, emulate mode, and in auto mode the size floor
// (OZDGEMM_MIN_DIM) and the performance model with its margin (OZDGEMM_AUTO_MARGIN), for the
// site's model with the rates of the GPU that would run the call.
// native_work scales the model's native time, for a native routine that does less work than
// the real GEMM priced (cublasZgemm3m); karatsuba (device calls): the priced problem runs in
// the Karatsuba form (predict_device).
// outlook: the recent counts of this shape's and its family's per-call choices
// (moduli_history.hpp), or null. With it, auto mode prices a per-call choice at those counts
// (each one the gate declines at the native time, an outcome of no count likewise), explores as
// above, and sets the route's gate; without it, at kAutoModuliEstimate moduli and no gate.
route decide_route(const config& cfg, call_site site, const char* blocked, int64_t m, int64_t n,
                   int64_t k, bool reads_c, const gpu_rates& rates, double native_work = 1.0,
                   bool karatsuba = false, const moduli_outlook* outlook = nullptr);

// A batch of `count` matrices, given `single`, the route of one of them. `engine`: the batch's
// prediction as one run of the batched engine (predict_device_batch) when the engine would take
// it, else null. Where auto mode's model decided the matrix (either way), a batch the engine
// takes is priced as the engine runs it, and the route says so (`engine`: the caller must then
// run the engine or the native routine, not one emulation per matrix, which was not priced).
// Where the model chose emulation for the matrix and the engine would not take the batch, the
// library serves one GEMM each: the native batched routine pays its fixed cost once (its
// matrices run together), the emulation its own per matrix; a batch that does not pay runs
// native. Any other route (blocked, native or emulate mode, the size floor, a trial of the
// choice, which is not priced faster) is `single`'s. The times of a priced route are the batch's.
route batch_route(const config& cfg, const route& single, int64_t count,
                  const prediction* engine = nullptr);

// Whether auto mode's model decides this call (so that its GPU's rates are worth measuring).
bool consults_model(const config& cfg, int64_t m, int64_t n, int64_t k);

}  // namespace ozdgemm::detail
