#pragma once
// Masks: masked_fill, and the triangles tril / triu that build a causal mask. Masks are
// float32 tensors of 0s and 1s (minidl tensors are float32); 1 plays PyTorch's `true`.
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// torch.masked_fill: `value` where mask is 1, x where it is 0. x and mask broadcast
/// together (NumPy rules) into the output's shape; a mask entry other than 0 or 1 is an
/// error. The gradient reaches x where the mask is 0; the mask gets none.
Tensor masked_fill(const Tensor& x, const Tensor& mask, float value);

/// torch.tril: the lower triangle of the last two dims, entries (i, j) with j - i <= diagonal;
/// the rest are 0. diagonal 0 keeps the main diagonal, 1 one above it, -1 drops it.
Tensor tril(const Tensor& x, int64_t diagonal = 0);
/// torch.triu: the upper triangle of the last two dims, entries with j - i >= diagonal.
/// The causal mask of attention is triu(ones(T, T), 1): 1 above the diagonal, the future.
Tensor triu(const Tensor& x, int64_t diagonal = 0);

}  // namespace minidl
