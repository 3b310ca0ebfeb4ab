#include "minidl/ops/norm/composite.hpp"

#include <limits>

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/reduce.hpp"
#include "minidl/ops/unary.hpp"
#include "row_norm_op.hpp"

namespace minidl::composite {
namespace {

// The last `count` dims of a rank-`rank` tensor.
Axes last_axes(int64_t rank, int64_t count) {
  Axes axes;
  for (int64_t d = rank - count; d < rank; ++d) axes.push_back(d);
  return axes;
}

// A (C) tensor shaped (1, C, 1, ...) to broadcast over an (N, C, *) input of this rank.
Tensor per_channel(const Tensor& t, int64_t rank) {
  Shape shape(size_t(rank), 1);
  shape[1] = t.numel();
  return t.reshape(shape);
}

// x - mean(x) over axes, centred exactly: x minus its float-rounded mean is exact for values
// near the mean, and the mean of what is left is small, so its own rounding is too. The
// shift is a constant, so the gradient is that of x - mean(x).
Tensor center(const Tensor& x, const Axes& axes) {
  Tensor shift;
  {
    NoGradGuard no_grad;
    shift = mean(x, axes, /*keepdim=*/true);
  }
  Tensor shifted = x - shift;
  return shifted - mean(shifted, axes, /*keepdim=*/true);
}

Tensor affine(Tensor y, const Tensor& weight, const Tensor& bias) {
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  const Axes axes = last_axes(x.dim(), int64_t(normalized_shape.size()));
  Tensor centered = center(x, axes);
  Tensor rstd = rsqrt(var(x, axes, /*correction=*/0, /*keepdim=*/true) + float(eps));
  return affine(centered * rstd, weight, bias);
}

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, std::optional<double> eps) {
  const Axes axes = last_axes(x.dim(), int64_t(normalized_shape.size()));
  const float epsilon = float(eps.value_or(double(std::numeric_limits<float>::epsilon())));
  Tensor rstd = rsqrt(mean(x * x, axes, /*keepdim=*/true) + epsilon);
  return affine(x * rstd, weight, Tensor());
}

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  detail::check_group_norm(x, num_groups, weight, bias);
  Tensor grouped = x.reshape({x.size(0), num_groups, -1});  // (N, G, C/G * positions)
  Tensor normalized = composite::layer_norm(grouped, {grouped.size(2)}, Tensor(), Tensor(), eps).reshape(x.shape());
  return affine(normalized, weight.defined() ? per_channel(weight, x.dim()) : Tensor(),
                bias.defined() ? per_channel(bias, x.dim()) : Tensor());
}

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  detail::check_batch_norm(x, running_mean, running_var, weight, bias, training);
  Axes axes{0};  // every dim but the channels
  for (int64_t d = 2; d < x.dim(); ++d) axes.push_back(d);
  Tensor centered, variance;  // (N, C, *) and (1, C, 1, ...)
  if (training) {
    centered = center(x, axes);
    variance = var(x, axes, /*correction=*/0, true);
    if (running_mean.defined()) {
      NoGradGuard no_grad;
      const float m = float(momentum);
      Tensor unbiased = var(x, axes, /*correction=*/1, false);
      Tensor(running_mean).copy_(running_mean * (1.0f - m) + mean(x, axes) * m);
      Tensor(running_var).copy_(running_var * (1.0f - m) + unbiased * m);
    }
  } else {
    centered = x - per_channel(running_mean, x.dim()).detach();
    variance = per_channel(running_var, x.dim()).detach();
  }
  Tensor normalized = centered * rsqrt(variance + float(eps));
  return affine(normalized, weight.defined() ? per_channel(weight, x.dim()) : Tensor(),
                bias.defined() ? per_channel(bias, x.dim()) : Tensor());
}

}  // namespace minidl::composite
