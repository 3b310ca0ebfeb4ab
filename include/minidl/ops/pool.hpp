#pragma once
// F.max_pool2d, F.avg_pool2d, F.adaptive_avg_pool2d over (N, C, H, W) or (C, H, W).
#include "minidl/ops/size2.hpp"
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// The maximum of each kernel window (-inf padding, at most half the kernel); stride
/// defaults (0) to kernel_size. The argmax is saved for the backward, which sends each
/// output's gradient to its maximum (the first one on ties).
Tensor max_pool2d(const Tensor& input, Size2 kernel_size, Size2 stride = 0, Size2 padding = 0, Size2 dilation = 1);

/// The mean of each window; stride 0 means kernel_size; zero padding (at most half the
/// kernel), counted in the divisor when count_include_pad (PyTorch's default).
Tensor avg_pool2d(const Tensor& input, Size2 kernel_size, Size2 stride = 0, Size2 padding = 0,
                  bool count_include_pad = true);

/// Averages over PyTorch's adaptive windows so the output is (..., output_size.h,
/// output_size.w); (1, 1) is global average pooling.
Tensor adaptive_avg_pool2d(const Tensor& input, Size2 output_size);

/// torch.flatten: dims start_dim..end_dim (negative count from the end) merged into one.
Tensor flatten(const Tensor& input, int64_t start_dim = 0, int64_t end_dim = -1);

}  // namespace minidl
