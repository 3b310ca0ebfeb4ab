#pragma once
// Column sums of a row-major matrix: the bias gradient of a Linear layer; and the bias
// itself added to each row, its forward.
#include <cstdint>

namespace minidl::kernels {

/// out[j] = sum over i of in[i * cols + j], accumulated in double in row order (the same
/// bits as sum_to_shape); the loop runs across columns, so it vectorizes.
void column_sums(const float* in, int64_t rows, int64_t cols, float* out);

/// matrix[i * cols + j] += row[j] for every row i: a Linear's bias onto the product x W^T
/// that sgemm wrote with beta 0. One rounding, fl(product + bias), as PyTorch's addmm (the
/// bias copied into the rows, sgemm with beta 1) where sgemm sums K in one block, as it
/// does for the lesson's layers; for longer K the bias joins after the whole sum instead of
/// before its first block, a difference within float rounding.
void add_row_to_rows(float* matrix, const float* row, int64_t rows, int64_t cols);

}  // namespace minidl::kernels
