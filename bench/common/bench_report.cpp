#include "bench_report.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <stdexcept>

namespace ozdgemm::bench {
namespace {

std::string version_string(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// The kernel driver's version from /proc (Linux), e.g. "580.159.04"; empty if unavailable.
// The line reads "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04 ...":
// the first token after "Kernel Module" that starts with a digit and holds a dot.
std::string kernel_driver_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!f || !std::getline(f, line)) return "";
  const size_t pos = line.find("Kernel Module");
  if (pos == std::string::npos) return "";
  std::istringstream rest(line.substr(pos));
  std::string tok;
  while (rest >> tok)
    if (std::isdigit(static_cast<unsigned char>(tok[0])) && tok.find('.') != std::string::npos)
      return tok;
  return "";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string num(double x) {
  if (std::isnan(x)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

}  // namespace

system_info query_system() {
  system_info si;
  int dev = 0;
  OZDGEMM_CUDA_TRY(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  OZDGEMM_CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
  si.gpu = prop.name;
  si.l2_bytes = static_cast<size_t>(prop.l2CacheSize);
  si.sm_count = prop.multiProcessorCount;
  si.cc_major = prop.major;
  si.cc_minor = prop.minor;
  int drv = 0, rt = 0;
  OZDGEMM_CUDA_TRY(cudaDriverGetVersion(&drv));
  OZDGEMM_CUDA_TRY(cudaRuntimeGetVersion(&rt));
  const std::string kmod = kernel_driver_version();
  si.driver = (kmod.empty() ? "" : kmod + " ") + "(cuda " + version_string(drv) + ")";
  si.cuda_runtime = version_string(rt);
  int major = 0, minor = 0, patch = 0;
  OZDGEMM_CUBLAS_TRY(cublasGetProperty(MAJOR_VERSION, &major));
  OZDGEMM_CUBLAS_TRY(cublasGetProperty(MINOR_VERSION, &minor));
  OZDGEMM_CUBLAS_TRY(cublasGetProperty(PATCH_LEVEL, &patch));
  si.cublas_version =
      std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  char buf[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  si.date = buf;
  return si;
}

const char* const kCsvHeader =
    "gpu,driver,cuda_runtime,cublas_version,date,phi,shape_m,shape_n,shape_k,method,moduli,"
    "mode,median_ms,min_ms,reps,tflops,ratio_vs_native,max_rel_err,max_scaled_err,samples,"
    "rotated,copies,workspace_mb,stage_prep_ms,stage_gemm_ms,stage_reduction_ms,stage_crt_ms,"
    "note";

csv_writer::csv_writer(const std::string& path, bool append, const system_info& si)
    : f_(path, append ? std::ios::app : std::ios::trunc), si_(si) {
  if (!f_) throw std::runtime_error("cannot open --csv file '" + path + "' for writing");
  f_.seekp(0, std::ios::end);
  if (f_.tellp() == std::streampos(0)) f_ << kCsvHeader << '\n';
  f_.flush();
}

void csv_writer::write(const result_row& r) {
  const bool oz = r.me.kind == method_kind::ozdgemm;
  const bool st = r.stages.measured && r.stages.error.empty();
  auto stage = [&](double v) { return st ? num(v) : std::string(); };
  std::string note = r.note;
  if (st && kReductionFused) note += std::string(note.empty() ? "" : "; ") + "reduction fused";
  f_ << csv_field(si_.gpu) << ',' << csv_field(si_.driver) << ',' << si_.cuda_runtime << ','
     << si_.cublas_version << ',' << si_.date << ',' << num(r.phi) << ',' << r.sh.m << ','
     << r.sh.n << ',' << r.sh.k << ',' << r.me.name << ','
     << (oz ? std::to_string(r.me.moduli) : "") << ',' << (oz ? mode_name(r.me.mode) : "") << ','
     << num(r.time.median_ms) << ',' << num(r.time.min_ms) << ',' << r.time.reps << ','
     << num(r.tflops) << ',' << num(r.ratio) << ',' << num(r.err.max_rel) << ','
     << num(r.err.max_scaled) << ',' << r.samples << ',' << (r.rotated ? 1 : 0) << ','
     << r.copies << ',' << (oz ? num(r.workspace_bytes / 1e6) : "") << ','
     << stage(r.stages.prep) << ',' << stage(r.stages.gemm) << ',' << stage(r.stages.reduction)
     << ',' << stage(r.stages.crt) << ',' << csv_field(note) << '\n';
  f_.flush();  // partial results survive an interrupted sweep
  if (!f_) throw std::runtime_error("write to the --csv file failed");
}

void print_table(const shape& sh, const std::vector<result_row>& rows, const std::string& rot,
                 int nsamples, bool stages) {
  std::printf(
      "\n== C = A B, m=%lld n=%lld k=%lld, phi=%g; %s; errors sampled at %d (i,j) vs "
      "double-double\n",
      static_cast<long long>(sh.m), static_cast<long long>(sh.n), static_cast<long long>(sh.k),
      rows.empty() ? kNaN : rows[0].phi, rot.c_str(), nsamples);
  std::printf("%-26s %10s %10s %8s %7s %10s %10s %4s %8s", "method", "median ms", "min ms",
              "TFLOPS", "x nat", "max rel", "max scaled", "reps", "ws MB");
  if (stages) std::printf(" %9s %9s %9s %9s", "prep ms", "gemm ms", "red ms", "crt ms");
  std::printf("\n");
  for (const auto& r : rows) {
    std::printf("%-26s %10.3f %10.3f %8.2f %7.2f %10.2e %10.2e %4d %8.0f", label(r.me).c_str(),
                r.time.median_ms, r.time.min_ms, r.tflops, r.ratio, r.err.max_rel,
                r.err.max_scaled, r.time.reps, r.workspace_bytes / 1e6);
    if (stages) {
      if (r.stages.measured && r.stages.error.empty()) {
        std::printf(" %9.3f %9.3f %9s %9.3f", r.stages.prep, r.stages.gemm,
                    kReductionFused ? "fused" : "?", r.stages.crt);
      } else {
        std::printf(" %9s %9s %9s %9s", "-", "-", "-", "-");
      }
    }
    if (!r.note.empty()) std::printf("  [%s]", r.note.c_str());
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace ozdgemm::bench
