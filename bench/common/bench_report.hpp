// What the benchmark reports: the system it ran on, one result row per shape x method, the
// CSV (one line per row, flushed as it is written so an interrupted sweep keeps its rows) and
// the console table.
#pragma once

#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

#include "bench_cuda.hpp"
#include "bench_inputs.hpp"
#include "bench_methods.hpp"

namespace ozdgemm::bench {

struct system_info {
  std::string gpu, driver, cuda_runtime, cublas_version, date;
  size_t l2_bytes = 0;
  int sm_count = 0, cc_major = 0, cc_minor = 0;
};

system_info query_system();

struct result_row {
  shape sh{};
  double phi = kNaN;
  method me;
  timing time;
  double tflops = kNaN, ratio = kNaN;  // 2mnk / median; native median / median
  errors err;
  int samples = 0;
  bool rotated = false;
  int copies = 1;
  double workspace_bytes = kNaN;  // ozdgemm only
  stage_split stages;
  std::string note;
};

// The CSV columns, in order (plot_results.py and make_results_page.py read them by name).
extern const char* const kCsvHeader;

class csv_writer {
 public:
  // append: add rows to an existing file, writing the header only if the file is empty.
  csv_writer(const std::string& path, bool append, const system_info& si);
  void write(const result_row& r);

 private:
  std::ofstream f_;
  const system_info& si_;
};

void print_table(const shape& sh, const std::vector<result_row>& rows, const std::string& rot,
                 int nsamples, bool stages);

}  // namespace ozdgemm::bench
