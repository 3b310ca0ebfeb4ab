#include "minidl/ops/shape_ops.hpp"

#include <algorithm>

#include "minidl/autograd/node.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {

Tensor reshape(const Tensor& x, const Shape& shape) { return x.reshape(shape); }

Tensor transpose(const Tensor& x) {
  if (x.dim() > 2)
    throw Error(cat("transpose: expected a tensor with at most 2 dims (as torch.t), got shape ", to_string(x.shape())));
  if (x.dim() < 2) return x.clone();  // torch.t returns a scalar or a vector as it is
  const int64_t rows = x.size(0), cols = x.size(1);
  Tensor out = Tensor::empty({cols, rows});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out.data()[j * rows + i] = x.data()[i * cols + j];
  return record(out, "Transpose", {x}, [](const Tensor& g) -> std::vector<Tensor> { return {transpose(g)}; });
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  const int64_t a = std::max<int64_t>(normalize_dim(d0, x.dim()), 0),
                b = std::max<int64_t>(normalize_dim(d1, x.dim()), 0);
  if (a == b) return x.clone();
  Shape shape = x.shape();
  std::swap(shape[size_t(a)], shape[size_t(b)]);
  Tensor out = Tensor::empty(shape);
  // Walk the output in order; the input index moves by x's stride of the output's dim.
  Shape in_strides = contiguous_strides(x.shape());
  std::swap(in_strides[size_t(a)], in_strides[size_t(b)]);
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
  return record(out, "Transpose", {x}, [a, b](const Tensor& g) -> std::vector<Tensor> { return {transpose(g, a, b)}; });
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
