#include "minidl/ops/slicing.hpp"

#include <algorithm>

#include "kernels/dim_copy.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {
namespace {

// The copy itself, once start, count and step are known to lie inside the dim.
Tensor take_range(const Tensor& x, int64_t d, int64_t start, int64_t count, int64_t step) {
  const kernels::DimLayout l = kernels::layout_around(x.shape(), d);
  Shape shape = x.shape();
  shape[size_t(d)] = count;
  Tensor out = Tensor::empty(shape);  // (outer, count, inner)
  kernels::copy_along_dim(out.data(), {count}, x.data(), {l.extent, start, step}, l.outer, count, l.inner);
  return record(
      out, "Slice", {x}, [l, start, count, step, x_shape = x.shape()](const Tensor& g) -> std::vector<Tensor> {
        Tensor gx = Tensor::zeros(x_shape);  // positions the slice skipped get 0
        kernels::copy_along_dim(gx.data(), {l.extent, start, step}, g.data(), {count}, l.outer, count, l.inner);
        return {gx};
      });
}

}  // namespace

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  if (x.dim() == 0) throw Error("narrow: cannot be applied to a 0-dim tensor (shape [])");
  const int64_t d = normalize_dim(dim, x.dim()), size = x.size(d);
  if (start < -size || start > size)
    throw Error(cat("narrow: start out of range (expected to be in range of [", -size, ", ", size, "], but got ", start,
                    ") for dim ", d, " of shape ", to_string(x.shape())));
  if (start < 0) start += size;
  if (length < 0) throw Error(cat("narrow: length must be non-negative, got ", length));
  if (start + length > size)
    throw Error(cat("narrow: start (", start, ") + length (", length, ") exceeds dimension size (", size, ") of dim ",
                    d, " of shape ", to_string(x.shape())));
  return take_range(x, d, start, length, 1);
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (x.dim() == 0) throw Error("slice: cannot be applied to a 0-dim tensor (shape [])");
  if (step <= 0) throw Error(cat("slice: step must be positive, got ", step));
  const int64_t d = normalize_dim(dim, x.dim()), size = x.size(d);
  // Python's rules: count negatives from the end, then clamp into [0, size].
  const auto clamp = [size](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + size : i, 0, size); };
  start = clamp(start);
  end = std::max(clamp(end), start);
  return take_range(x, d, start, end == start ? 0 : (end - start - 1) / step + 1, step);
}

}  // namespace minidl
