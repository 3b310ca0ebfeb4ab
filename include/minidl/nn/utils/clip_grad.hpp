#pragma once
// Gradient clipping as torch.nn.utils: clip_grad_norm_ rescales all gradients together so
// their total norm is at most max_norm; clip_grad_value_ clamps each gradient value.
#include <vector>

#include "minidl/tensor/tensor.hpp"

namespace minidl::nn::utils {

/// The total norm of the parameters' gradients (those without one are skipped), of order
/// norm_type (the norm of the per-parameter norms; inf: the largest absolute value), as a
/// 0-dim tensor; then every gradient is multiplied in place by min(1, max_norm / (total +
/// 1e-6)), as PyTorch does (always, so a NaN or inf norm spreads into the gradients).
/// No gradient at all: returns 0 and changes nothing.
/// Throws UsageError for a norm_type that is not > 0 (NaN included) and, with
/// error_if_nonfinite, for a NaN or infinite total norm (before changing anything).
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

/// Clamps every gradient value into [-clip_value, clip_value] in place (PyTorch's clamp:
/// a negative clip_value makes every value clip_value; NaN stays NaN).
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);

}  // namespace minidl::nn::utils
