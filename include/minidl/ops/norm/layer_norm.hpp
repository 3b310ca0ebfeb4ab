#pragma once
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// PyTorch's F.layer_norm, one fused op: x (*, normalized_shape) normalized over its
/// trailing dims with the biased variance, eps inside the sqrt; weight and bias of shape
/// normalized_shape, or undefined. The forward saves mean and rstd per row.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps = 1e-5);
/// tanh(layer_norm(x, ...)) as one op, with the same bits in its result and every gradient
/// (tanh's own kernels, in place on the norm's output): one graph node instead of two, and
/// the norm's output never made apart. nn::Sequential uses it for a LayerNorm followed by
/// a Tanh, as it uses linear_tanh for a Linear followed by one.
Tensor layer_norm_tanh(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                       double eps = 1e-5);

}  // namespace minidl
