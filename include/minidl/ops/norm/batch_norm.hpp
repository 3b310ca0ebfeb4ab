#pragma once
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// PyTorch's F.batch_norm, one fused op. x (N, C, *); running_mean, running_var, weight
/// and bias (C) or undefined. training: normalize with the batch mean and biased variance,
/// and when running statistics are given update them in place (no graph):
/// running = (1 - momentum) running + momentum batch, running_var with the unbiased
/// variance. Not training: normalize with the running statistics (both required).
/// Gradients flow to x, weight and bias; the forward saves mean and rstd per channel.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps);

}  // namespace minidl
