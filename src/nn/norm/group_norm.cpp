#include "minidl/nn/norm/group_norm.hpp"

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/nn/python_repr.hpp"
#include "minidl/ops/norm/group_norm.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

GroupNorm::GroupNorm(GroupNormOptions options) : options_(options) {
  if (options.num_groups <= 0 || options.num_channels % options.num_groups != 0)
    throw Error(cat("GroupNorm: num_channels must be divisible by num_groups, got num_channels=", options.num_channels,
                    " and num_groups=", options.num_groups));
  if (options.affine) {
    weight = register_parameter("weight", Tensor::ones({options.num_channels}));
    bias = register_parameter("bias", Tensor::zeros({options.num_channels}));
  }
}

void GroupNorm::reset_parameters() {
  NoGradGuard no_grad;  // an init's in-place writes are not part of any graph
  if (weight.defined()) weight.fill_(1.0f);
  if (bias.defined()) bias.fill_(0.0f);
}

void GroupNorm::check_input(const Tensor& input) const {
  if (input.dim() < 2 || input.size(1) != options_.num_channels)
    throw Error(
        cat(repr(), ": expected input of shape (N, ", options_.num_channels, ", *), got ", to_string(input.shape())));
}

Tensor GroupNorm::forward(const Tensor& input) {
  check_input(input);
  return group_norm(input, options_.num_groups, weight, bias, options_.eps);
}

std::string GroupNorm::extra_repr() const {
  return cat(options_.num_groups, ", ", options_.num_channels, ", eps=", python_float(options_.eps),
             ", affine=", python_bool(options_.affine));
}

}  // namespace minidl::nn
