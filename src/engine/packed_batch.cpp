#include "engine/packed_batch.hpp"

#include "common/error.hpp"

namespace ozdgemm::detail {
namespace {

size_t operand_bytes(const batch_operand& x) {
  return static_cast<size_t>(x.rows) * static_cast<size_t>(x.cols) *
         static_cast<size_t>(x.elem_bytes);
}

// x with its array of pointers moved to matrix `first`.
batch_operand from(const batch_operand& x, int64_t first) {
  batch_operand y = x;
  y.ptrs = x.ptrs + first;
  return y;
}

}  // namespace

size_t packed_batch::matrix_bytes(const batch_operand& a, const batch_operand& b,
                                  const batch_operand& c) {
  return operand_bytes(a) + operand_bytes(b) + operand_bytes(c);
}

int64_t packed_batch::per_chunk(size_t matrix_bytes, size_t cap, int64_t count) {
  if (count <= 1 || matrix_bytes == 0) return count < 1 ? 1 : count;
  const size_t fits = cap / matrix_bytes;
  return fits < 1 ? 1 : fits < static_cast<size_t>(count) ? static_cast<int64_t>(fits) : count;
}

packed_batch::packed_batch(const batch_operand& a, const batch_operand& b, const batch_operand& c,
                           int64_t first, int64_t count, cudaStream_t stream) noexcept
    : part_{a, b, c}, first_(first), count_(count), stream_(stream) {
  size_t total = 0;
  for (int p = 0; p < 3; ++p) {
    offset_[p] = total;
    // Each part starts on a 256-byte boundary, as cudaMalloc's own blocks do.
    total += (operand_bytes(part_[p]) * static_cast<size_t>(count) + 255) & ~size_t{255};
  }
  void* base = nullptr;
  if (cudaMallocAsync(&base, total > 0 ? total : 256, stream) != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: the caller runs the chunk natively
    return;
  }
  base_ = static_cast<char*>(base);
}

packed_batch::~packed_batch() {
  if (base_ != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaFreeAsync(base_, stream_));
}

void* packed_batch::at(int part, int64_t i) const {
  return base_ + offset_[part] + static_cast<size_t>(i) * operand_bytes(part_[part]);
}

void packed_batch::gather(const double* alpha_dev, bool read_ab) {
  if (read_ab) {
    launch_batch_gather(from(part_[0], first_), count_, base_ + offset_[0], alpha_dev, stream_);
    OZDGEMM_CHECK_LAUNCH();
    launch_batch_gather(from(part_[1], first_), count_, base_ + offset_[1], alpha_dev, stream_);
    OZDGEMM_CHECK_LAUNCH();
  }
  launch_batch_gather(from(part_[2], first_), count_, base_ + offset_[2], nullptr, stream_);
  OZDGEMM_CHECK_LAUNCH();
}

void packed_batch::scatter() {
  launch_batch_scatter(from(part_[2], first_), count_, base_ + offset_[2], stream_);
  OZDGEMM_CHECK_LAUNCH();
}

}  // namespace ozdgemm::detail
