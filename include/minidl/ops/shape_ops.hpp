#pragma once
#include <vector>

#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// Same as x.reshape(shape).
Tensor reshape(const Tensor& x, const Shape& shape);
/// Transpose of a matrix (a copy: minidl tensors are contiguous).
Tensor transpose(const Tensor& x);
/// Rows x[indices[0]], x[indices[1]], ... along dim 0 (mini-batches); differentiable.
Tensor select_rows(const Tensor& x, const std::vector<int64_t>& indices);

}  // namespace minidl
