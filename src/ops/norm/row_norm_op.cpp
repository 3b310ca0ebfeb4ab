#include "row_norm_op.hpp"

#include <algorithm>
#include <array>

#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::detail {

kernels::NormStats stats_rows(float* p, bool centered, int64_t count) {
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

namespace {

// The forward's statistics, kept for the backward: (3, rows) mean, mean_rest, rstd, or
// (1, rows) rstd for RMSNorm. Up to kInlineRows rows live in the backward's closure itself
// (on the heap already, as every closure of this size): a small batch allocates no tensor.
class SavedStats {
 public:
  SavedStats(bool centered, int64_t rows) : centered_(centered), rows_(rows) {
    if (rows > kInlineRows) heap_ = Tensor::empty({centered ? 3 : 1, rows});
  }
  kernels::NormStats view() { return stats_rows(heap_.defined() ? heap_.data() : inline_.data(), centered_, rows_); }

 private:
  static constexpr int64_t kInlineRows = 8;
  std::array<float, 3 * kInlineRows> inline_{};  // (3, rows) while rows <= kInlineRows
  Tensor heap_;                                  // (3, rows) or (1, rows) past it
  bool centered_;
  int64_t rows_;
};

}  // namespace

Tensor row_norm(const char* name, const Tensor& x, const Tensor& weight, const Tensor& bias,
                const kernels::RowNormLayout& layout, double eps) {
  Tensor out = Tensor::empty(x.shape());
  const bool want_x = needs_grad({x}), want_w = needs_grad({weight}), want_b = needs_grad({bias});
  if (!want_x && !want_w && !want_b) {  // inference: nothing saved
    kernels::row_norm_forward(out.data(), {}, x.data(), data_or_null(weight), data_or_null(bias), layout, eps);
    return out;
  }
  SavedStats stats(layout.centered, layout.rows);
  kernels::row_norm_forward(out.data(), stats.view(), x.data(), data_or_null(weight), data_or_null(bias), layout, eps);
  const SavedTensor saved_x(x);
  const SavedTensor saved_w = weight.defined() ? SavedTensor(weight) : SavedTensor();
  // The shapes of the gradients come from the saved tensors; only a bias without a weight
  // needs its own (an empty Shape allocates nothing).
  const Shape bias_shape = !weight.defined() && bias.defined() ? bias.shape() : Shape{};
  return record(out, name, {x, weight, bias}, [=](const Tensor& g) mutable -> std::vector<Tensor> {
    const Tensor& x_values = saved_x.unpack();
    const Tensor& w_values = saved_w.unpack();
    const Shape& affine_shape = w_values.defined() ? w_values.shape() : bias_shape;
    Tensor dx = empty_if(want_x, x_values.shape());
    Tensor dw = empty_if(want_w, affine_shape);
    Tensor db = empty_if(want_b, affine_shape);
    kernels::row_norm_backward(data_or_null(dx), data_or_null(dw), data_or_null(db), g.data(), x_values.data(),
                               stats.view(), data_or_null(w_values), layout);
    return {dx, dw, db};
  });
}

}  // namespace minidl::detail
