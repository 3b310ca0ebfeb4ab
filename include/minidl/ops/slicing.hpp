#pragma once
// Slices along one dim: narrow and slice (Python's start:end:step). Each result is a copy,
// since minidl tensors are contiguous; the gradient goes back to the positions it came from.
#include <cstdint>
#include <limits>

#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// torch.narrow: `length` entries of dim from `start` (a negative start counts from the end).
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);

/// x[..., start:end:step, ...] along dim, as Python slices a list: negative start and end
/// count from the end, both are clamped to [0, size], an empty range gives size 0; step > 0.
/// The default end is the end of the dim (PyTorch's None).
Tensor slice(const Tensor& x, int64_t dim, int64_t start = 0, int64_t end = std::numeric_limits<int64_t>::max(),
             int64_t step = 1);

}  // namespace minidl
