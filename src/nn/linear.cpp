#include "minidl/nn/linear.hpp"

#include <cmath>

#include "minidl/nn/init.hpp"
#include "minidl/nn/python_repr.hpp"
#include "minidl/ops/matmul.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

Linear::Linear(const LinearOptions& options, Generator& gen)
    : in_features_(options.in_features), out_features_(options.out_features) {
  if (in_features_ <= 0 || out_features_ <= 0)
    throw Error(cat("Linear: expected positive in_features and out_features, got in_features=", in_features_,
                    ", out_features=", out_features_));
  weight = register_parameter("weight", Tensor::empty({out_features_, in_features_}));
  bias = register_parameter("bias", options.bias() ? Tensor::empty({out_features_}) : Tensor());
  reset_parameters(gen);
}

void Linear::reset_parameters(Generator& gen) {
  // PyTorch's nn.Linear.reset_parameters: kaiming_uniform_(a = sqrt 5) gives the bound
  // sqrt 3 * sqrt(2 / (1 + 5)) / sqrt(in) = 1 / sqrt(in); the bias takes 1 / sqrt(fan_in).
  init::kaiming_uniform_(weight, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  if (bias.defined()) {
    const double bound = 1.0 / std::sqrt(double(init::calculate_fan_in_and_fan_out(weight).first));
    init::uniform_(bias, -bound, bound, gen);
  }
}

Tensor Linear::forward(const Tensor& input) {
  check_input(input);
  return linear(input, weight, bias);  // folds any leading dims into one batch dim
}

void Linear::check_input(const Tensor& input) const {
  if (input.dim() == 0 || input.size(-1) != in_features_)
    throw Error(cat("Linear: expected input of shape [*, ", in_features_, "] for weight of shape ",
                    to_string(weight.shape()), ", got ", to_string(input.shape())));
}

std::string Linear::extra_repr() const {
  return cat("in_features=", in_features_, ", out_features=", out_features_, ", bias=", python_bool(bias.defined()));
}

}  // namespace minidl::nn
