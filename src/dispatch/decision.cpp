#include "dispatch/decision.hpp"

#include <algorithm>

namespace ozdgemm::detail {

double count_gate::emulated_ms(int s) const {
  const moduli_setting fixed = moduli_setting::fixed(s);
  return site_ == call_site::device
             ? predict_device(m_, n_, k_, fixed, mode_, reads_c_, *rates_, karatsuba_).emulated_ms
             : predict_host(m_, n_, k_, fixed, mode_, reads_c_, *rates_).emulated_ms;
}

bool count_gate::runs(int s) const {
  return !active() || emulated_ms(s) < (1.0 - margin_) * native_ms_;
}

bool consults_model(const config& cfg, int64_t m, int64_t n, int64_t k) {
  return cfg.mode == run_mode::automatic && std::min({m, n, k}) >= cfg.min_dim;
}

namespace {

// A per-call choice priced at recent counts: the choice, then for each outcome the emulation at
// its count where the gate lets it run (a count chosen on the GPU always runs), else native.
double expected_ms(const count_gate& gate, const count_tally& t, bool host_choice, double choice_ms,
                   double native_ms) {
  double sum = 0.0;
  for (int s = 0; s <= kMaxModuli; ++s)
    if (t.counts[s] != 0)
      sum += t.counts[s] *
             (s != 0 && (!host_choice || gate.runs(s)) ? gate.emulated_ms(s) : native_ms);
  return choice_ms + sum / t.total;
}

// Auto mode's model past the size floor (decide_route).
route decide_by_model(const config& cfg, call_site site, int64_t m, int64_t n, int64_t k,
                      bool reads_c, const gpu_rates& rates, bool karatsuba,
                      const moduli_outlook* outlook, prediction p) {
  const double bar = (1.0 - cfg.auto_margin) * p.native_ms;
  if (outlook == nullptr || !cfg.moduli.chooses_per_call()) {
    if (p.emulated_ms < bar) return {true, "auto: model predicts emulation faster", p};
    return {false, "auto: model predicts native faster", p};
  }
  const count_gate gate(site, m, n, k, cfg.scaling, reads_c, karatsuba, rates, p.native_ms,
                        cfg.auto_margin);
  const double choice = choice_ms(m, n, k, cfg.moduli, rates);
  // Worth a try when the choice would pay at the smallest count it is likely to return.
  const bool worth_trying = outlook->host_choice && choice + gate.emulated_ms(kExploreModuli) < bar;
  const auto price = [&](const count_tally& t) {
    return expected_ms(gate, t, outlook->host_choice, choice, p.native_ms);
  };
  if (outlook->shape.total == 0 && outlook->family.total != 0) {  // a new shape of a known kind
    p.emulated_ms = price(outlook->family);
    if (p.emulated_ms < bar)
      return {true, "auto: model predicts emulation faster at other shapes' recent counts", p,
              gate};
    return {false, "auto: model predicts native faster at other shapes' recent counts", p};
  }
  if (outlook->shape.total == 0) {  // the process's first choice of this family
    if (p.emulated_ms < bar) return {true, "auto: model predicts emulation faster", p, gate};
    if (worth_trying)
      return {true, "auto: trying the choice (no count seen for this shape)", p, gate};
    return {false, "auto: model predicts native faster", p};
  }
  p.emulated_ms = price(outlook->shape);
  if (p.emulated_ms < bar)
    return {true, "auto: model predicts emulation faster at this shape's recent counts", p, gate};
  if (worth_trying && outlook->decided_since % kRetryEvery == 0)
    return {true, "auto: trying the choice again (this shape's recent counts run native)", p, gate};
  return {false, "auto: model predicts native faster at this shape's recent counts", p};
}

}  // namespace

route decide_route(const config& cfg, call_site site, const char* blocked, int64_t m, int64_t n,
                   int64_t k, bool reads_c, const gpu_rates& rates, double native_work,
                   bool karatsuba, const moduli_outlook* outlook) {
  if (blocked != nullptr) return {false, blocked, {0.0, 0.0}};
  prediction p = site == call_site::device
                     ? predict_device(m, n, k, cfg.moduli, cfg.scaling, reads_c, rates, karatsuba)
                     : predict_host(m, n, k, cfg.moduli, cfg.scaling, reads_c, rates);
  p.native_ms *= native_work;
  switch (cfg.mode) {
    case run_mode::native:
      return {false, "OZDGEMM_MODE=native", p};
    case run_mode::emulate:
      return {true, "OZDGEMM_MODE=emulate", p};
    case run_mode::automatic:
      break;
  }
  if (std::min({m, n, k}) < cfg.min_dim) return {false, "auto: below OZDGEMM_MIN_DIM", p};
  route r = decide_by_model(cfg, site, m, n, k, reads_c, rates, karatsuba, outlook, p);
  r.priced = true;
  return r;
}

route batch_route(const config& cfg, const route& single, int64_t count, const prediction* engine) {
  if (cfg.mode != run_mode::automatic || count <= 1) return single;
  if (engine != nullptr && single.priced && cfg.moduli.is_fixed()) {
    route r{engine->emulated_ms < (1.0 - cfg.auto_margin) * engine->native_ms,
            "auto: model predicts the batched engine faster", *engine};
    if (!r.emulate)
      r.reason =
          "auto: model predicts the native batched routine faster than the "
          "batched engine";
    r.priced = r.engine = true;
    return r;
  }
  if (!single.emulate) return single;
  const prediction& one = single.predicted;
  if (!(one.emulated_ms < (1.0 - cfg.auto_margin) * one.native_ms)) return single;  // a trial
  const double latency = std::min(native_latency_ms(), one.native_ms);
  const double n = static_cast<double>(count);
  const prediction all{latency + n * (one.native_ms - latency), n * one.emulated_ms};
  if (all.emulated_ms < (1.0 - cfg.auto_margin) * all.native_ms)
    return {true, single.reason, all, single.gate, true};
  return {false,
          "auto: model predicts the native batched routine faster (one emulation per matrix)",
          all,
          {},
          true};
}

}  // namespace ozdgemm::detail
