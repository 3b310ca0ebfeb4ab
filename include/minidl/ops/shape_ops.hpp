#pragma once
#include <vector>

#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// Same as x.reshape(shape).
Tensor reshape(const Tensor& x, const Shape& shape);
/// Transpose of a matrix, as torch.t: a scalar or a vector comes back as it is (a copy:
/// minidl tensors are contiguous); more than 2 dims is an error.
Tensor transpose(const Tensor& x);
/// x with dims d0 and d1 swapped (negative dims count from the end), as torch.transpose;
/// a copy, since minidl tensors are contiguous. A rank-0 or rank-1 tensor accepts 0 / -1.
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
/// x with its dims reordered: the result's dim k is x's dim dims[k] (negative dims count
/// from the end), as torch.permute; a copy. Attention's (B, T, H, D) -> (B, H, T, D) is
/// permute(x, {0, 2, 1, 3}).
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
/// Rows x[indices[0]], x[indices[1]], ... along dim 0 (mini-batches); differentiable.
Tensor select_rows(const Tensor& x, const std::vector<int64_t>& indices);

}  // namespace minidl
