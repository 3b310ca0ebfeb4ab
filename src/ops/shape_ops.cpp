#include "minidl/ops/shape_ops.hpp"

#include <algorithm>

#include "minidl/autograd/node.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {

Tensor reshape(const Tensor& x, const Shape& shape) { return x.reshape(shape); }

namespace {

// out[i_0, ..., i_{r-1}] = x[...] with out's dim k being x's dim order[k]: a copy that walks
// the output in order while the input index moves by x's stride of each output dim.
Tensor permuted_copy(const Tensor& x, const std::vector<int64_t>& order) {
  const Shape x_strides = contiguous_strides(x.shape());
  Shape shape, in_strides;  // the output's shape, and x's stride along each output dim
  for (int64_t d : order) {
    shape.push_back(x.size(d));
    in_strides.push_back(x_strides[size_t(d)]);
  }
  Tensor out = Tensor::empty(shape);
  const int64_t rank = x.dim(), count = out.numel();
  Shape index(size_t(rank), 0);
  const float* in = x.data();
  float* o = out.data();
  int64_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    o[i] = in[offset];
    for (int64_t d = rank - 1; d >= 0; --d) {
      offset += in_strides[size_t(d)];
      if (++index[size_t(d)] < shape[size_t(d)]) break;
      offset -= in_strides[size_t(d)] * shape[size_t(d)];
      index[size_t(d)] = 0;
    }
  }
  return out;
}

std::vector<int64_t> identity_order(int64_t rank) {
  std::vector<int64_t> order(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) order[size_t(d)] = d;
  return order;
}

}  // namespace

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  const int64_t a = std::max<int64_t>(normalize_dim(d0, x.dim()), 0),
                b = std::max<int64_t>(normalize_dim(d1, x.dim()), 0);
  if (a == b) return x.clone();
  std::vector<int64_t> order = identity_order(x.dim());
  std::swap(order[size_t(a)], order[size_t(b)]);
  return record(permuted_copy(x, order), "Transpose", {x},
                [a, b](const Tensor& g) -> std::vector<Tensor> { return {transpose(g, a, b)}; });
}

Tensor transpose(const Tensor& x) {
  if (x.dim() > 2)
    throw Error(cat("transpose: expected a tensor with at most 2 dims (as torch.t), got shape ", to_string(x.shape())));
  return x.dim() < 2 ? x.clone() : transpose(x, 0, 1);  // torch.t returns a scalar or a vector as it is
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  if (int64_t(dims.size()) != x.dim())
    throw Error(cat("permute: expected one dim per dim of the input, got dims ", to_string(dims), " for shape ",
                    to_string(x.shape())));
  std::vector<int64_t> order, inverse(dims.size(), -1);
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t d = normalize_dim(dims[k], x.dim());
    if (inverse[size_t(d)] >= 0)
      throw Error(cat("permute: dims ", to_string(dims), " name dim ", d, " twice (shape ", to_string(x.shape()), ")"));
    inverse[size_t(d)] = int64_t(k);  // input dim d becomes output dim k
    order.push_back(d);
  }
  return record(permuted_copy(x, order), "Permute", {x},
                [inverse](const Tensor& g) -> std::vector<Tensor> { return {permute(g, inverse)}; });
}

Tensor select_rows(const Tensor& x, const std::vector<int64_t>& indices) {
  if (x.dim() < 1) throw Error("select_rows: expected a tensor with at least one dimension, got a scalar");
  const int64_t rows = x.size(0);
  const int64_t row_size = rows == 0 ? 0 : x.numel() / rows;
  for (int64_t index : indices)
    if (index < 0 || index >= rows)
      throw Error(cat("select_rows: index ", index, " is out of range for dimension 0 with size ", rows, " (shape ",
                      to_string(x.shape()), ")"));
  Shape shape = x.shape();
  shape[0] = int64_t(indices.size());
  Tensor out = Tensor::empty(shape);
  const float* in = x.data();
  float* o = out.data();
  for (size_t r = 0; r < indices.size(); ++r)
    for (int64_t j = 0; j < row_size; ++j) o[int64_t(r) * row_size + j] = in[indices[r] * row_size + j];
  // Checked before the closure is built: its copy of the indices would be a malloc for
  // every batch a DataLoader gathers.
  if (!needs_grad({x})) return out;
  return record(out, "SelectRows", {x},
                [indices, row_size, source = x.shape()](const Tensor& g) -> std::vector<Tensor> {
                  Tensor gx = Tensor::zeros(source);  // rows picked twice get both gradients
                  for (size_t r = 0; r < indices.size(); ++r) {
                    float* dst = gx.data() + indices[r] * row_size;
                    const float* src = g.data() + int64_t(r) * row_size;
                    for (int64_t j = 0; j < row_size; ++j) dst[j] += src[j];
                  }
                  return {gx};
                });
}

}  // namespace minidl
