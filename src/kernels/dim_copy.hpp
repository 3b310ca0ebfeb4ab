#pragma once
// Copies along one dim of a contiguous tensor, seen as (outer, extent, inner) blocks: the
// loops behind slicing, cat and their backwards. No autograd, no allocation.
#include <cstdint>

#include "minidl/tensor/shape.hpp"

namespace minidl::kernels {

/// A contiguous shape seen around one dim: (outer, extent, inner), outer the product of the
/// dims before it, inner of those after. A rank-0 shape is (1, 1, 1).
struct DimLayout {
  int64_t outer = 1, extent = 1, inner = 1;
};
DimLayout layout_around(const Shape& shape, int64_t dim);

/// Positions start, start + step, ... along the middle dim of (outer, extent, inner) blocks.
struct DimRange {
  int64_t extent;  // the dim's size in this buffer
  int64_t start = 0;
  int64_t step = 1;
};

/// For each of the `outer` blocks, copies `count` rows of `inner` floats from src's
/// positions to dst's: dst[o, to.start + j to.step, :] = src[o, from.start + j from.step, :].
void copy_along_dim(float* dst, DimRange to, const float* src, DimRange from, int64_t outer, int64_t count,
                    int64_t inner);

}  // namespace minidl::kernels
