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

void tanh_backward_column_sums(float* dpre, float* dbias, const float* dout, const float* y, int64_t rows,
                               int64_t cols) {
  constexpr int64_t kBlock = 256;  // as column_sums: each column summed over the rows in order
  for (int64_t j0 = 0; j0 < cols; j0 += kBlock) {
    const int64_t width = std::min(kBlock, cols - j0);
    double acc[kBlock];  // (width): only these are cleared, not all 256 of a narrow layer
    std::fill_n(acc, width, 0.0);
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t at = i * cols + j0;
      if (dpre == dout) {  // in place: a loop of its own, as one that could alias would not vectorize
        for (int64_t j = 0; j < width; ++j) dpre[at + j] *= 1.0f - y[at + j] * y[at + j];
      } else {
        for (int64_t j = 0; j < width; ++j) {
          const float yj = y[at + j];
          dpre[at + j] = dout[at + j] * (1.0f - yj * yj);
        }
      }
      if (dbias)
        for (int64_t j = 0; j < width; ++j) acc[j] += double(dpre[at + j]);
    }
    if (dbias)
      for (int64_t j = 0; j < width; ++j) dbias[j0 + j] = float(acc[j]);
  }
}

}  // namespace minidl::kernels
