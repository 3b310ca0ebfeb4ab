#include "row_norm_op.hpp"

#include <algorithm>

#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::detail {

kernels::NormStats stats_rows(Tensor& stats, bool centered, int64_t count) {
  float* p = stats.data();
  if (!centered) return {.rstd = p};
  return {.mean = p, .mean_rest = p + count, .rstd = p + 2 * count};
}

kernels::RowNormLayout trailing_layout(const Tensor& x, const Shape& normalized_shape) {
  if (normalized_shape.empty())
    throw Error(
        "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, "
        "but got normalized_shape = []");
  const size_t k = normalized_shape.size();
  const Shape& shape = x.shape();
  if (shape.size() < k || !std::equal(normalized_shape.begin(), normalized_shape.end(), shape.end() - int64_t(k))) {
    std::string expected = "[*";
    for (int64_t d : normalized_shape) expected += cat(", ", d);
    throw Error(cat("Given normalized_shape=", to_string(normalized_shape), ", expected input with shape ", expected,
                    "], but got input of size", to_string(shape)));
  }
  const int64_t cols = numel(normalized_shape);
  return {.rows = cols == 0 ? 0 : x.numel() / cols, .channels = cols};
}

void check_affine(const char* op, const char* what, const Tensor& t, const Shape& shape, const Tensor& x) {
  if (t.defined() && t.shape() != shape)
    throw Error(cat(op, ": expected ", what, " of shape ", to_string(shape), " for an input of shape ",
                    to_string(x.shape()), ", got ", to_string(t.shape())));
}

void check_channel_tensors(const char* op, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                           const Tensor& bias, int64_t channels, const Tensor& x) {
  const Shape shape{channels};
  check_affine(op, "running_mean", running_mean, shape, x);
  check_affine(op, "running_var", running_var, shape, x);
  check_affine(op, "weight", weight, shape, x);
  check_affine(op, "bias", bias, shape, x);
  if (running_mean.defined() != running_var.defined())
    throw Error(cat(op, ": running_mean and running_var must be given together"));
}

Tensor row_norm(const char* name, const Tensor& x, const Tensor& weight, const Tensor& bias,
                const kernels::RowNormLayout& layout, double eps) {
  Tensor out = Tensor::empty(x.shape());
  const bool want_x = needs_grad({x}), want_w = needs_grad({weight}), want_b = needs_grad({bias});
  if (!want_x && !want_w && !want_b) {  // inference: nothing saved
    kernels::row_norm_forward(out.data(), {}, x.data(), data_or_null(weight), data_or_null(bias), layout, eps);
    return out;
  }
  // (3, rows): mean, mean_rest, rstd; RMSNorm (1, rows): rstd
  Tensor saved_stats = Tensor::empty({layout.centered ? 3 : 1, layout.rows});
  const kernels::NormStats stats = stats_rows(saved_stats, layout.centered, layout.rows);
  kernels::row_norm_forward(out.data(), stats, x.data(), data_or_null(weight), data_or_null(bias), layout, eps);
  const SavedTensor saved_x(x);
  const SavedTensor saved_w = weight.defined() ? SavedTensor(weight) : SavedTensor();
  const Shape affine_shape = weight.defined() ? weight.shape() : bias.defined() ? bias.shape() : Shape{};
  return record(out, name, {x, weight, bias}, [=, shape = x.shape()](const Tensor& g) -> std::vector<Tensor> {
    Tensor dx = empty_if(want_x, shape);
    Tensor dw = empty_if(want_w, affine_shape);
    Tensor db = empty_if(want_b, affine_shape);
    Tensor stats_handle = saved_stats;  // read only
    kernels::row_norm_backward(data_or_null(dx), data_or_null(dw), data_or_null(db), g.data(), saved_x.unpack().data(),
                               stats_rows(stats_handle, layout.centered, layout.rows), data_or_null(saved_w.unpack()),
                               layout);
    return {dx, dw, db};
  });
}

}  // namespace minidl::detail
