#pragma once
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// log(softmax(x)) along dim, computed as x - max - log(sum(exp(x - max))).
Tensor log_softmax(const Tensor& x, int64_t dim = -1);

}  // namespace minidl
