#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace minidl {

/// A tensor's extent along each dimension, outermost first.
using Shape = std::vector<int64_t>;

/// Product of the extents (1 for a scalar's empty shape).
int64_t numel(const Shape& shape);

/// "[2, 3]", the form every error message uses.
std::string to_string(const Shape& shape);

/// Maps a possibly negative dimension into [0, rank); throws if out of range.
int64_t normalize_dim(int64_t dim, int64_t rank);

/// Row-major strides (in elements) of a contiguous tensor of this shape.
Shape contiguous_strides(const Shape& shape);

/// NumPy broadcasting of two shapes; throws naming both if they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace minidl
