#include "minidl/nn/norm/dyt.hpp"

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/nn/python_repr.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/shape_ops.hpp"
#include "minidl/ops/unary.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

DyT::DyT(DyTOptions options) : options_(options) {
  if (options_.normalized_shape <= 0)
    throw Error(cat("DyT: normalized_shape must be positive, got ", options_.normalized_shape));
  alpha = register_parameter("alpha", Tensor::full({1}, float(options_.alpha_init_value)));
  weight = register_parameter("weight", Tensor::ones({options_.normalized_shape}));
  bias = register_parameter("bias", Tensor::zeros({options_.normalized_shape}));
}

void DyT::reset_parameters() {
  NoGradGuard no_grad;  // an init's in-place writes are not part of any graph
  alpha.fill_(float(options_.alpha_init_value));
  weight.fill_(1.0f);
  bias.fill_(0.0f);
}

Tensor DyT::forward(const Tensor& input) {
  const int64_t c = options_.normalized_shape;
  const int64_t feature_dim = options_.channels_last ? input.dim() - 1 : 1;
  if (feature_dim < 0 || feature_dim >= input.dim() || input.size(feature_dim) != c)
    throw Error(cat("DyT(", c, "): expected input with ", c, " features on ",
                    options_.channels_last ? "the last dim (N, *, C)" : "dim 1 (N, C, *)", ", got shape ",
                    to_string(input.shape())));
  Shape per_feature(input.dim() - feature_dim, 1);  // (C) or (C, 1, ..., 1): broadcasts over the dims after C
  per_feature[0] = c;
  return tanh(alpha * input) * weight.reshape(per_feature) + bias.reshape(per_feature);
}

std::string DyT::extra_repr() const {
  return cat("normalized_shape=", options_.normalized_shape,
             ", alpha_init_value=", python_float(options_.alpha_init_value),
             ", channels_last=", python_bool(options_.channels_last));
}

}  // namespace minidl::nn
