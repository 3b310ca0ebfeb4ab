#pragma once
// The normalization layers written from primitive ops (mean, var, sub, mul, rsqrt,
// reshape): the readable version of each fused kernel, and the reference the tests hold
// the kernels to. Same arguments and results as the fused ops in minidl/ops/norm/, only
// slower (every step is its own op with its own saved tensors).
#include <optional>

#include "minidl/tensor/tensor.hpp"

namespace minidl::composite {

/// (x - mean) / sqrt(var + eps) * weight + bias over the trailing dims.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps = 1e-5);

/// x / sqrt(mean(x^2) + eps) * weight over the trailing dims; eps nullopt = float32 epsilon.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                std::optional<double> eps = std::nullopt);

/// x (N, C, *) viewed as (N, G, rest), layer-normalized over rest, then weight and bias per channel.
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps = 1e-5);

/// Per channel over every dim but 1; updates the running statistics like the fused op.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps);

}  // namespace minidl::composite
