#include "minidl/nn/linear.hpp"

#include <cmath>

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/nn/python_repr.hpp"
#include "minidl/ops/matmul.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, Generator& gen)
    : in_features_(in_features), out_features_(out_features) {
  if (in_features <= 0 || out_features <= 0)
    throw Error(cat("Linear: expected positive in_features and out_features, got in_features=", in_features,
                    ", out_features=", out_features));
  weight = register_parameter("weight", Tensor::empty({out_features, in_features}));
  this->bias = register_parameter("bias", bias ? Tensor::empty({out_features}) : Tensor());
  reset_parameters(gen);
}

void Linear::reset_parameters(Generator& gen) {
  NoGradGuard no_grad;  // an init's in-place writes are not part of any graph
  // kaiming_uniform_(a = sqrt(5)) gives bound sqrt(6 / ((1 + 5) in)) = 1 / sqrt(in), and
  // PyTorch draws the bias with the same bound 1 / sqrt(fan_in).
  const float bound = float(1.0 / std::sqrt(double(in_features_)));
  weight.copy_(Tensor::rand(weight.shape(), gen, -bound, bound));
  if (bias.defined()) bias.copy_(Tensor::rand(bias.shape(), gen, -bound, bound));
}

Tensor Linear::forward(const Tensor& input) {
  if (input.dim() == 0 || input.size(-1) != in_features_)
    throw Error(cat("Linear: expected input of shape [*, ", in_features_, "] for weight of shape ",
                    to_string(weight.shape()), ", got ", to_string(input.shape())));
  if (input.dim() == 2) return linear(input, weight, bias);
  // Fold the leading dims into one batch dim, then restore them.
  Shape out_shape = input.shape();
  out_shape.back() = out_features_;
  return linear(input.reshape({-1, in_features_}), weight, bias).reshape(out_shape);
}

std::string Linear::extra_repr() const {
  return cat("in_features=", in_features_, ", out_features=", out_features_,
             ", bias=", python_bool(bias.defined()));
}

}  // namespace minidl::nn
