#pragma once
// Joining tensors along a dim and taking them apart: cat, stack, split, chunk, as torch.
// Each result is a copy (minidl tensors are contiguous), differentiable.
#include <concepts>
#include <cstdint>
#include <vector>

#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// torch.cat: the tensors end to end along dim. All have the same rank (at least 1) and the
/// same sizes in every other dim.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
/// cat(tensors, 1) with an int: error.hpp's cat(parts...), which builds messages, would take
/// that call for itself as an exact match; this overload is the closer one.
template <std::integral Dim>
Tensor cat(const std::vector<Tensor>& tensors, Dim dim) {
  return cat(tensors, int64_t(dim));
}

/// torch.stack: the tensors, all of one shape, along a new dim at `dim` (in [-rank - 1, rank]).
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);

/// torch.split with an int: pieces of split_size along dim, the last one smaller when the
/// size does not divide. Write split(x, std::vector<int64_t>{n}) for one size: {n} alone is
/// the int.
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
/// torch.split with a list (split_with_sizes): pieces of these sizes, which must add up to
/// the size of dim.
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& split_sizes, int64_t dim = 0);

/// torch.chunk: at most `chunks` pieces of ceil(size / chunks) along dim (fewer when the
/// size runs out first: 6 in 4 chunks gives 3 pieces of 2).
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);

}  // namespace minidl
