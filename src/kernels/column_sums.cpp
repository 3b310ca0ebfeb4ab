#include "kernels/column_sums.hpp"

#include <algorithm>

namespace minidl::kernels {

void column_sums(const float* in, int64_t rows, int64_t cols, float* out) {
  constexpr int64_t kBlock = 256;  // columns per pass: the accumulators stay in L1
  for (int64_t j0 = 0; j0 < cols; j0 += kBlock) {
    const int64_t width = std::min(kBlock, cols - j0);
    double acc[kBlock] = {};  // (width)
    for (int64_t i = 0; i < rows; ++i) {
      const float* row = in + i * cols + j0;
      for (int64_t j = 0; j < width; ++j) acc[j] += double(row[j]);
    }
    for (int64_t j = 0; j < width; ++j) out[j0 + j] = float(acc[j]);
  }
}

void add_row_to_rows(float* matrix, const float* row, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    float* out = matrix + i * cols;  // (cols)
#pragma omp simd                     // out never overlaps row, which the compiler cannot see
    for (int64_t j = 0; j < cols; ++j) out[j] += row[j];
  }
}

}  // namespace minidl::kernels
