#include "minidl/ops/masking.hpp"

#include "kernels/broadcast.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {
namespace {

void check_zeros_and_ones(const Tensor& mask) {
  const float* m = mask.data();
  for (int64_t i = 0; i < mask.numel(); ++i)
    if (m[i] != 0.0f && m[i] != 1.0f)
      throw Error(cat("masked_fill: expected a mask of 0s and 1s (minidl's masks are float32, 1 for true), got ", m[i],
                      " at flat index ", i, " of the mask of shape ", to_string(mask.shape())));
}

// out = where(mask, fill, x) over the broadcast shape, with fill given per call.
Tensor where_mask(const Tensor& x, const Tensor& mask, const Shape& shape, float fill) {
  Tensor out = Tensor::empty(shape);
  kernels::broadcast_binary(x.data(), x.shape(), mask.data(), mask.shape(), out.data(), shape,
                            [fill](float v, float m) { return m != 0.0f ? fill : v; });
  return out;
}

}  // namespace

Tensor masked_fill(const Tensor& x, const Tensor& mask, float value) {
  Shape shape;
  try {
    shape = broadcast_shapes(x.shape(), mask.shape());
  } catch (const Error&) {
    throw Error(cat("masked_fill: the mask's shape ", to_string(mask.shape()), " does not broadcast with the input's ",
                    to_string(x.shape())));
  }
  check_zeros_and_ones(mask);
  Tensor out = where_mask(x, mask, shape, value);
  if (!needs_grad({x})) return out;
  const SavedTensor saved_mask(mask);
  return record(out, "MaskedFill", {x}, [saved_mask, x_shape = x.shape()](const Tensor& g) -> std::vector<Tensor> {
    // The filled entries do not depend on x: their gradient is 0; broadcast copies add up.
    return {sum_to(where_mask(g, saved_mask.unpack(), g.shape(), 0.0f), x_shape)};
  });
}

namespace {

// Zeroes, in place, every (i, j) of the last two dims outside the triangle.
void keep_triangle(Tensor& t, int64_t diagonal, bool lower) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  const int64_t matrices = rows * cols == 0 ? 0 : t.numel() / (rows * cols);
  float* p = t.data();
  for (int64_t b = 0; b < matrices; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const bool inside = lower ? j - i <= diagonal : j - i >= diagonal;
        if (!inside) p[(b * rows + i) * cols + j] = 0.0f;
      }
}

Tensor triangle(const Tensor& x, int64_t diagonal, bool lower) {
  const char* op = lower ? "tril" : "triu";
  if (x.dim() < 2)
    throw Error(cat(op, ": expected a tensor with at least 2 dims (it keeps a triangle of the last two), got shape ",
                    to_string(x.shape())));
  Tensor out = x.detach().clone();
  keep_triangle(out, diagonal, lower);
  return record(out, lower ? "Tril" : "Triu", {x},
                [diagonal, lower](const Tensor& g) -> std::vector<Tensor> { return {triangle(g, diagonal, lower)}; });
}

}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) { return triangle(x, diagonal, true); }
Tensor triu(const Tensor& x, int64_t diagonal) { return triangle(x, diagonal, false); }

}  // namespace minidl
