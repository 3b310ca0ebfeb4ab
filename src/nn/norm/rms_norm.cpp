#include "minidl/nn/norm/rms_norm.hpp"

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/nn/python_repr.hpp"
#include "minidl/ops/norm/rms_norm.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

RMSNorm::RMSNorm(RMSNormOptions options) : options_(std::move(options)) {
  if (options_.elementwise_affine) weight = register_parameter("weight", Tensor::ones(options_.normalized_shape));
}

void RMSNorm::reset_parameters() {
  NoGradGuard no_grad;  // an init's in-place writes are not part of any graph
  if (weight.defined()) weight.fill_(1.0f);
}

Tensor RMSNorm::forward(const Tensor& input) {
  return rms_norm(input, options_.normalized_shape, weight, options_.eps);
}

std::string RMSNorm::extra_repr() const {
  return cat(python_tuple(options_.normalized_shape), ", eps=", python_float(options_.eps),
             ", elementwise_affine=", python_bool(options_.elementwise_affine));
}

}  // namespace minidl::nn
