#include "minidl/tensor/shape.hpp"

#include "minidl/tensor/error.hpp"

namespace minidl {

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t extent : shape)
    if (__builtin_mul_overflow(n, extent, &n))
      throw Error(cat("shape ", to_string(shape), " has more elements than a 64-bit count can hold"));
  return n;
}

std::string to_string(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

int64_t normalize_dim(int64_t dim, int64_t rank) {
  int64_t lowest = rank == 0 ? -1 : -rank;
  int64_t highest = rank == 0 ? 0 : rank - 1;
  if (dim < lowest || dim > highest)
    throw Error(cat("dimension out of range (expected to be in range of [", lowest, ", ", highest,
                    "], but got ", dim, ")"));
  return dim < 0 ? dim + rank : dim;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t ea = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t eb = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (ea != eb && ea != 1 && eb != 1)
      throw Error(cat("shapes ", to_string(a), " and ", to_string(b),
                      " cannot be broadcast together (dimension ", i, ": ", ea, " vs ", eb, ")"));
    out[i] = ea == 1 ? eb : ea;
  }
  return out;
}

}  // namespace minidl
