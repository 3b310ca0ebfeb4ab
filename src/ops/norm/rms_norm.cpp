#include "minidl/ops/norm/rms_norm.hpp"

#include <limits>

#include "row_norm_op.hpp"

namespace minidl {

namespace {

Tensor checked_rms_norm(const char* name, const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                        std::optional<double> eps, bool then_tanh) {
  kernels::RowNormLayout layout = detail::trailing_layout(x, normalized_shape);
  layout.centered = false;
  detail::check_affine("rms_norm", "weight", weight, normalized_shape, x);
  const double epsilon = eps.value_or(double(std::numeric_limits<float>::epsilon()));
  return detail::row_norm(name, x, weight, Tensor(), layout, epsilon, then_tanh);
}

}  // namespace

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, std::optional<double> eps) {
  return checked_rms_norm("RMSNorm", x, normalized_shape, weight, eps, false);
}

Tensor rms_norm_tanh(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, std::optional<double> eps) {
  return checked_rms_norm("RMSNormTanh", x, normalized_shape, weight, eps, true);
}

}  // namespace minidl
