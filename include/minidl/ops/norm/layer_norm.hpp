#pragma once
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// PyTorch's F.layer_norm, one fused op: x (*, normalized_shape) normalized over its
/// trailing dims with the biased variance, eps inside the sqrt; weight and bias of shape
/// normalized_shape, or undefined. The forward saves mean and rstd per row.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps = 1e-5);

}  // namespace minidl
