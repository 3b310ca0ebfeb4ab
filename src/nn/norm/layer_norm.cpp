#include "minidl/nn/norm/layer_norm.hpp"

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/nn/python_repr.hpp"
#include "minidl/ops/norm/layer_norm.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

LayerNorm::LayerNorm(LayerNormOptions options) : options_(std::move(options)) {
  if (options_.elementwise_affine) {
    weight = register_parameter("weight", Tensor::ones(options_.normalized_shape));
    if (options_.bias) bias = register_parameter("bias", Tensor::zeros(options_.normalized_shape));
  }
}

void LayerNorm::reset_parameters() {
  NoGradGuard no_grad;  // an init's in-place writes are not part of any graph
  if (weight.defined()) weight.fill_(1.0f);
  if (bias.defined()) bias.fill_(0.0f);
}

Tensor LayerNorm::forward(const Tensor& input) {
  return layer_norm(input, options_.normalized_shape, weight, bias, options_.eps);
}

std::string LayerNorm::extra_repr() const {
  return cat(python_tuple(options_.normalized_shape), ", eps=", python_float(options_.eps),
             ", elementwise_affine=", python_bool(options_.elementwise_affine));
}

}  // namespace minidl::nn
