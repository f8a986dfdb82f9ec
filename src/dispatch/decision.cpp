#include "dispatch/decision.hpp"

#include <algorithm>

namespace ozdgemm::detail {

bool consults_model(const config& cfg, int64_t m, int64_t n, int64_t k) {
  return cfg.mode == run_mode::automatic && std::min({m, n, k}) >= cfg.min_dim;
}

route decide_route(const config& cfg, call_site site, const char* blocked, int64_t m, int64_t n,
                   int64_t k, bool reads_c, const gpu_rates& rates, double native_work,
                   bool karatsuba) {
  if (blocked != nullptr) return {false, blocked, {0.0, 0.0}};
  prediction p = site == call_site::device
                     ? predict_device(m, n, k, cfg.moduli, cfg.scaling, reads_c, rates, karatsuba)
                     : predict_host(m, n, k, cfg.moduli, cfg.scaling, reads_c, rates);
  p.native_ms *= native_work;
  switch (cfg.mode) {
    case run_mode::native: return {false, "OZDGEMM_MODE=native", p};
    case run_mode::emulate: return {true, "OZDGEMM_MODE=emulate", p};
    case run_mode::automatic: break;
  }
  if (std::min({m, n, k}) < cfg.min_dim) return {false, "auto: below OZDGEMM_MIN_DIM", p};
  if (p.emulated_ms < (1.0 - cfg.auto_margin) * p.native_ms)
    return {true, "auto: model predicts emulation faster", p};
  return {false, "auto: model predicts native faster", p};
}

}  // namespace ozdgemm::detail
