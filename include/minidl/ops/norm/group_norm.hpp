#pragma once
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// PyTorch's F.group_norm, one fused op: x (N, C, *) with C divisible by num_groups;
/// each example's group of C / num_groups channels (all positions) is normalized with
/// its own mean and biased variance; weight and bias (C) or undefined, per channel.
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps = 1e-5);

}  // namespace minidl
