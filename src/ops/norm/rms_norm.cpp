#include "minidl/ops/norm/rms_norm.hpp"

#include <limits>

#include "row_norm_op.hpp"

namespace minidl {

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, std::optional<double> eps) {
  kernels::RowNormLayout layout = detail::trailing_layout(x, normalized_shape);
  layout.centered = false;
  detail::check_affine("rms_norm", "weight", weight, normalized_shape, x);
  const double epsilon = eps.value_or(double(std::numeric_limits<float>::epsilon()));
  return detail::row_norm("RMSNorm", x, weight, Tensor(), layout, epsilon);
}

}  // namespace minidl
