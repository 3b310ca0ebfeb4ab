#include "minidl/ops/norm/layer_norm.hpp"

#include "row_norm_op.hpp"

namespace minidl {

namespace {

Tensor checked_layer_norm(const char* name, const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                          const Tensor& bias, double eps, bool then_tanh) {
  const kernels::RowNormLayout layout = detail::trailing_layout(x, normalized_shape);
  detail::check_affine("layer_norm", "weight", weight, normalized_shape, x);
  detail::check_affine("layer_norm", "bias", bias, normalized_shape, x);
  return detail::row_norm(name, x, weight, bias, layout, eps, then_tanh);
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  return checked_layer_norm("NativeLayerNorm", x, normalized_shape, weight, bias, eps, false);
}

Tensor layer_norm_tanh(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                       double eps) {
  return checked_layer_norm("NativeLayerNormTanh", x, normalized_shape, weight, bias, eps, true);
}

}  // namespace minidl
