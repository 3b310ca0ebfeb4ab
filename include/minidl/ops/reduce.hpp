#pragma once
// Reductions over any set of axes (empty = all), with keepdim.
#include <vector>

#include "minidl/tensor/tensor.hpp"

namespace minidl {

using Axes = std::vector<int64_t>;

Tensor sum(const Tensor& x, const Axes& axes = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const Axes& axes = {}, bool keepdim = false);
/// Variance divided by (n - correction): correction 1 is unbiased, 0 biased. With n <= correction
/// the value is NaN (0 / 0) or inf, and the gradient PyTorch 2.x's (docs/pytorch-differences.md):
/// one element with correction 1 gives NaN for both.
Tensor var(const Tensor& x, const Axes& axes = {}, int64_t correction = 1, bool keepdim = false);
/// Largest element along one dim; the gradient goes to the first maximum.
Tensor max(const Tensor& x, int64_t dim, bool keepdim = false);
/// Largest element of the whole tensor (rank 0); tied maxima share the gradient evenly
/// (as torch.max(x) does). NaN is the maximum when present.
Tensor max(const Tensor& x);
/// Index (as float) of the first maximum along dim; not differentiable.
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);

}  // namespace minidl
