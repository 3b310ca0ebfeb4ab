#include "minidl/ops/join.hpp"

#include <algorithm>

#include "kernels/dim_copy.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/ops/slicing.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {
namespace {

// cat's checks: one rank for all, at least 1, the same sizes outside dim. Returns dim normalized.
int64_t check_cat(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw Error("cat: expected a non-empty list of tensors, got an empty one");
  const Shape& first = tensors[0].shape();
  for (size_t t = 0; t < tensors.size(); ++t)
    if (tensors[t].dim() == 0)
      throw Error(cat("cat: a zero-dimensional tensor (at position ", t, ") cannot be concatenated"));
  const int64_t d = normalize_dim(dim, int64_t(first.size()));
  for (size_t t = 1; t < tensors.size(); ++t) {
    const Shape& shape = tensors[t].shape();
    bool same = shape.size() == first.size();
    for (size_t k = 0; same && k < shape.size(); ++k) same = int64_t(k) == d || shape[k] == first[k];
    if (!same)
      throw Error(cat("cat: expected tensors of one rank with the same sizes except in dim ", d, ", got shape ",
                      to_string(first), " at position 0 and ", to_string(shape), " at position ", t));
  }
  return d;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  const int64_t d = check_cat(tensors, dim);
  Shape shape = tensors[0].shape();
  shape[size_t(d)] = 0;
  for (const Tensor& t : tensors) shape[size_t(d)] += t.size(d);
  const kernels::DimLayout l = kernels::layout_around(shape, d);
  Tensor out = Tensor::empty(shape);     // (outer, sum of the sizes, inner)
  std::vector<int64_t> starts, extents;  // where each input lies along dim
  for (const Tensor& t : tensors) {
    starts.push_back(starts.empty() ? 0 : starts.back() + extents.back());
    extents.push_back(t.size(d));
    kernels::copy_along_dim(out.data(), {l.extent, starts.back()}, t.data(), {extents.back()}, l.outer, extents.back(),
                            l.inner);
  }
  if (!needs_grad(tensors)) return out;
  std::vector<Shape> shapes;
  for (const Tensor& t : tensors) shapes.push_back(t.shape());
  return record(out, "Cat", tensors, [l, starts, extents, shapes](const Tensor& g) -> std::vector<Tensor> {
    std::vector<Tensor> grads;
    for (size_t t = 0; t < shapes.size(); ++t) {
      grads.push_back(Tensor::empty(shapes[t]));
      kernels::copy_along_dim(grads.back().data(), {extents[t]}, g.data(), {l.extent, starts[t]}, l.outer, extents[t],
                              l.inner);
    }
    return grads;
  });
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw Error("stack: expected a non-empty list of tensors, got an empty one");
  const Shape& first = tensors[0].shape();
  const int64_t d = normalize_dim(dim, int64_t(first.size()) + 1);
  std::vector<Tensor> unsqueezed;  // each (..., 1 at d, ...)
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (tensors[t].shape() != first)
      throw Error(cat("stack: expected tensors of one shape, got ", to_string(first), " at position 0 and ",
                      to_string(tensors[t].shape()), " at position ", t));
    Shape shape = first;
    shape.insert(shape.begin() + d, 1);
    unsqueezed.push_back(tensors[t].reshape(shape));
  }
  return cat(unsqueezed, d);
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& split_sizes, int64_t dim) {
  if (x.dim() == 0) throw Error("split: expected a tensor with at least one dim, got a scalar (shape [])");
  const int64_t d = normalize_dim(dim, x.dim());
  int64_t total = 0;
  for (int64_t size : split_sizes) total += size;
  const bool negative = std::any_of(split_sizes.begin(), split_sizes.end(), [](int64_t s) { return s < 0; });
  if (negative || total != x.size(d))
    throw Error(cat("split: expected split sizes >= 0 that add up to ", x.size(d), " (the size of dim ", d,
                    " of shape ", to_string(x.shape()), "), got ", to_string(split_sizes)));
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t size : split_sizes) {
    pieces.push_back(narrow(x, d, start, size));
    start += size;
  }
  return pieces;
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  if (x.dim() == 0) throw Error("split: expected a tensor with at least one dim, got a scalar (shape [])");
  const int64_t d = normalize_dim(dim, x.dim()), size = x.size(d);
  if (split_size < 0 || (split_size == 0 && size != 0))
    throw Error(cat("split: expected a split_size > 0 (0 only for a dim of size 0), got ", split_size, " for dim ", d,
                    " of shape ", to_string(x.shape())));
  // As ATen: at least one piece, even of size 0.
  const int64_t count = split_size == 0 ? 1 : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<int64_t> sizes(size_t(count), split_size);
  sizes.back() = size - split_size * (count - 1);
  return split(x, sizes, d);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  if (chunks <= 0) throw Error(cat("chunk: expected chunks > 0, got ", chunks, " (shape ", to_string(x.shape()), ")"));
  if (x.dim() == 0) throw Error("chunk: expected a tensor with at least one dim, got a scalar (shape [])");
  const int64_t d = normalize_dim(dim, x.dim()), size = x.size(d);
  // A dim of size 0 gives `chunks` empty pieces, as ATen (split would give one).
  if (size == 0) return split(x, std::vector<int64_t>(size_t(chunks), 0), d);
  return split(x, (size + chunks - 1) / chunks, d);
}

}  // namespace minidl
