#pragma once
// F.conv2d: a 2-D cross-correlation over (N, C, H, W) images, or one (C, H, W) image.
#include "minidl/ops/size2.hpp"
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// input (N, Cin, H, W) or (Cin, H, W); weight (Cout, Cin / groups, KH, KW); bias (Cout) or
/// undefined. Zero padding on each side; out (N, Cout, OH, OW) with
/// OH = floor((H + 2 padding - dilation (KH - 1) - 1) / stride) + 1 (likewise OW).
/// Differentiable in input, weight and bias. Errors in PyTorch's words, with the shapes.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, Size2 stride = 1, Size2 padding = 0,
              Size2 dilation = 1, int64_t groups = 1);

}  // namespace minidl
