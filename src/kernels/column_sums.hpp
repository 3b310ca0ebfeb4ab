#pragma once
// Column sums of a row-major matrix: the bias gradient of a Linear layer.
#include <cstdint>

namespace minidl::kernels {

/// out[j] = sum over i of in[i * cols + j], accumulated in double in row order (the same
/// bits as sum_to_shape); the loop runs across columns, so it vectorizes.
void column_sums(const float* in, int64_t rows, int64_t cols, float* out);

}  // namespace minidl::kernels
