#pragma once
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// exp(x) / sum(exp(x)) along dim (torch.softmax), computed from x - max so that no exp
/// overflows. A line whose entries are all -inf (every key masked) gives NaN, as PyTorch.
Tensor softmax(const Tensor& x, int64_t dim = -1);

/// log(softmax(x)) along dim, computed as x - max - log(sum(exp(x - max))).
Tensor log_softmax(const Tensor& x, int64_t dim = -1);

}  // namespace minidl
