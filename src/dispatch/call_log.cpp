#include "dispatch/call_log.hpp"

#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "common/logging.hpp"
#include "engine/emulate.hpp"
#include "engine/gpu_choice.hpp"

namespace ozdgemm::detail {
namespace {

const char* to_string(outcome o) {
  switch (o) {
    case outcome::emulated: return "emulated";
    case outcome::native: return "native";
    case outcome::fallback: return "fallback";
  }
  return "?";
}

struct tally {
  long long calls = 0;
  double seconds = 0.0;
};

// Keyed by the reason's address: reasons are static strings, so a call costs no allocation.
struct summary {
  std::mutex mutex;
  std::map<std::pair<outcome, const char*>, tally> by_reason;
  std::map<int, long long> by_moduli;  // emulated calls by the s that ran
  // Calls per intercepted routine and outcome, keyed by the entry's name (a static string,
  // compared by content: no allocation per call).
  struct by_name {
    bool operator()(const char* a, const char* b) const { return std::strcmp(a, b) < 0; }
  };
  std::map<const char*, std::array<long long, 3>, by_name> by_entry;
};

// Leaked: it is read by an atexit handler, after static destructors may have run.
summary& totals() {
  static auto* s = new summary();
  return *s;
}

void print_summary() {
  // Nothing to print below info; and the GPU's tally below is mapped host memory, which a
  // program's cudaDeviceReset() before exit has freed: never read it when it would not be shown.
  if (!logger().should_log(spdlog::level::info)) return;
  summary& s = totals();
  std::lock_guard<std::mutex> lock(s.mutex);
  long long count[3] = {0, 0, 0};
  double seconds = 0.0;
  for (const auto& [key, t] : s.by_reason) {
    count[static_cast<int>(key.first)] += t.calls;
    seconds += t.seconds;
  }
  logger().info("summary: {} calls emulated, {} native, {} fallback; {:.3f} s in intercepted calls",
                count[0], count[1], count[2], seconds);
  for (const auto& [key, t] : s.by_reason)
    logger().info("summary:   {:8} {:6} calls  {:9.3f} s  {}", to_string(key.first), t.calls,
                  t.seconds, key.second);
  // The s of the emulated calls: with a per-call choice (the default) it varies with the data.
  std::string hist;
  for (const auto& [moduli, calls] : s.by_moduli)
    hist += (hist.empty() ? "" : ", ") +
            (moduli == kChosenOnGpu ? std::string("chosen on the GPU")
                                    : std::string("s=") + std::to_string(moduli)) +
            ": " + std::to_string(calls);
  if (!hist.empty()) logger().info("summary: emulated calls by moduli count: {}", hist);
  // What the GPU chose for those (counted by the GPU, as far as it has got by exit).
  if (s.by_moduli.count(kChosenOnGpu) != 0) {
    unsigned long long chosen[kMaxModuli + 1];
    read_gpu_choice_tally(chosen);
    std::string gpu;
    for (int m = 0; m <= kMaxModuli; ++m)
      if (chosen[m] != 0)
        gpu += (gpu.empty() ? "" : ", ") +
               (m == 0 ? std::string("native (no s <= 20 certified)")
                       : std::string("s=") + std::to_string(m)) +
               ": " + std::to_string(chosen[m]);
    logger().info("summary: certified counts chosen on the GPU: {}", gpu.empty() ? "none yet" : gpu);
  }
  for (const auto& [entry, n] : s.by_entry)
    logger().info("summary: routine {}: {} emulated, {} native, {} fallback", entry, n[0], n[1],
                  n[2]);
  logger().flush();
}

}  // namespace

void log_call(const call_record& r) noexcept {
  try {
    static std::once_flag registered;
    std::call_once(registered, [] { std::atexit(print_summary); });
    {
      summary& s = totals();
      std::lock_guard<std::mutex> lock(s.mutex);
      tally& t = s.by_reason[{r.result, r.reason}];
      ++t.calls;
      t.seconds += r.seconds;
      if (r.result == outcome::emulated) ++s.by_moduli[r.num_moduli];
      ++s.by_entry[r.entry][static_cast<int>(r.result)];
    }
    const char* on = r.gpu != nullptr ? ", " : "";
    const char* gpu = r.gpu != nullptr ? r.gpu : "";
    if (r.result == outcome::emulated)
      logger().debug(
          "{} m={} n={} k={} -> emulated, s={} ({}; predicted native {:.3f} ms, "
          "emulated {:.3f} ms) {:.1f} us{}{}",
          r.entry, r.m, r.n, r.k,
          r.num_moduli == kChosenOnGpu ? std::string("chosen on the GPU")
                                       : std::to_string(r.num_moduli),
          r.reason, r.predicted_native_ms, r.predicted_emulated_ms, r.seconds * 1e6, on, gpu);
    else
      logger().debug(
          "{} m={} n={} k={} -> {} ({}; predicted native {:.3f} ms, emulated {:.3f} ms) "
          "{:.1f} us{}{}",
          r.entry, r.m, r.n, r.k, to_string(r.result), r.reason, r.predicted_native_ms,
          r.predicted_emulated_ms, r.seconds * 1e6, on, gpu);
  } catch (...) {
    // Logging must never take the host application down.
  }
}

}  // namespace ozdgemm::detail
