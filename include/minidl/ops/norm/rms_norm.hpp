#pragma once
#include <optional>

#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// PyTorch's F.rms_norm, one fused op: y = x / sqrt(mean(x^2) + eps) * weight over the
/// trailing dims named by normalized_shape; no centering, no bias. eps nullopt means
/// float32's machine epsilon (1.1920929e-07). The forward saves rstd per row.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                std::optional<double> eps = std::nullopt);

}  // namespace minidl
