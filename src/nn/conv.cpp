#include "minidl/nn/conv.hpp"

#include <cmath>

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/ops/conv2d.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

Conv2d::Conv2d(const Conv2dOptions& options, Generator& gen) : options_(options) {
  const auto& o = options;
  if (o.in_channels <= 0 || o.out_channels <= 0 || o.kernel_size.h <= 0 || o.kernel_size.w <= 0)
    throw Error(cat("Conv2d: expected positive in_channels, out_channels and kernel_size, got in_channels=",
                    o.in_channels, ", out_channels=", o.out_channels, ", kernel_size=", to_string(o.kernel_size)));
  if (o.groups() <= 0) throw Error(cat("groups must be a positive integer, got groups=", o.groups()));
  if (o.in_channels % o.groups() != 0)
    throw Error(
        cat("in_channels must be divisible by groups, got in_channels=", o.in_channels, " and groups=", o.groups()));
  if (o.out_channels % o.groups() != 0)
    throw Error(
        cat("out_channels must be divisible by groups, got out_channels=", o.out_channels, " and groups=", o.groups()));
  if (o.stride().h <= 0 || o.stride().w <= 0 || o.padding().h < 0 || o.padding().w < 0 || o.dilation().h <= 0 ||
      o.dilation().w <= 0)
    throw Error(cat(
        "Conv2d: expected positive stride and dilation and non-negative padding, got stride=", to_string(o.stride()),
        ", padding=", to_string(o.padding()), ", dilation=", to_string(o.dilation())));
  weight = register_parameter(
      "weight", Tensor::empty({o.out_channels, o.in_channels / o.groups(), o.kernel_size.h, o.kernel_size.w}));
  bias = register_parameter("bias", o.bias() ? Tensor::empty({o.out_channels}) : Tensor());
  reset_parameters(gen);
}

void Conv2d::reset_parameters(Generator& gen) {
  NoGradGuard no_grad;  // an init's in-place writes are not part of any graph
  // kaiming_uniform_(a = sqrt(5)): bound sqrt(6 / ((1 + 5) fan_in)) = 1 / sqrt(fan_in), the
  // bias's bound too; fan_in is a weight row's size, in / groups * KH * KW.
  const int64_t fan_in = weight.numel() / options_.out_channels;
  const float bound = float(1.0 / std::sqrt(double(fan_in)));
  weight.copy_(Tensor::rand(weight.shape(), gen, -bound, bound));
  if (bias.defined()) bias.copy_(Tensor::rand(bias.shape(), gen, -bound, bound));
}

Tensor Conv2d::forward(const Tensor& input) {
  return conv2d(input, weight, bias, options_.stride(), options_.padding(), options_.dilation(), options_.groups());
}

std::string Conv2d::extra_repr() const {
  const auto& o = options_;
  std::string s = cat(o.in_channels, ", ", o.out_channels, ", kernel_size=", to_string(o.kernel_size),
                      ", stride=", to_string(o.stride()));
  if (o.padding() != Size2(0)) s += cat(", padding=", to_string(o.padding()));
  if (o.dilation() != Size2(1)) s += cat(", dilation=", to_string(o.dilation()));
  if (o.groups() != 1) s += cat(", groups=", o.groups());
  if (!o.bias()) s += ", bias=False";
  return s;
}

}  // namespace minidl::nn
