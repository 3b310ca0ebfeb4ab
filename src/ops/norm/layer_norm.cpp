#include "minidl/ops/norm/layer_norm.hpp"

#include "row_norm_op.hpp"

namespace minidl {

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  const kernels::RowNormLayout layout = detail::trailing_layout(x, normalized_shape);
  detail::check_affine("layer_norm", "weight", weight, normalized_shape, x);
  detail::check_affine("layer_norm", "bias", bias, normalized_shape, x);
  return detail::row_norm("NativeLayerNorm", x, weight, bias, layout, eps);
}

}  // namespace minidl
