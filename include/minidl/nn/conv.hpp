#pragma once
// Conv2d, PyTorch's nn.Conv2d: weight (out, in / groups, KH, KW), bias (out).
#include <cstdint>

#include "minidl/nn/module.hpp"
#include "minidl/ops/size2.hpp"
#include "minidl/tensor/generator.hpp"

namespace minidl::nn {

/// nn.Conv2d's arguments, as torch::nn::Conv2dOptions:
/// Conv2dOptions(16, 32, 3).stride(2).padding(1); sizes square (3) or {3, 5}.
struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, Size2 kernel_size)
      : in_channels(in_channels), out_channels(out_channels), kernel_size(kernel_size) {}
  Conv2dOptions& stride(Size2 v) { return set(stride_, v); }
  Conv2dOptions& padding(Size2 v) { return set(padding_, v); }
  Conv2dOptions& dilation(Size2 v) { return set(dilation_, v); }
  Conv2dOptions& groups(int64_t v) { return set(groups_, v); }
  Conv2dOptions& bias(bool v) { return set(bias_, v); }
  Size2 stride() const { return stride_; }
  Size2 padding() const { return padding_; }
  Size2 dilation() const { return dilation_; }
  int64_t groups() const { return groups_; }
  bool bias() const { return bias_; }

  int64_t in_channels;
  int64_t out_channels;
  Size2 kernel_size;

 private:
  template <typename T>
  Conv2dOptions& set(T& field, T value) {
    field = value;
    return *this;
  }
  Size2 stride_ = 1;    // stride=1
  Size2 padding_ = 0;   // padding=0 (zeros)
  Size2 dilation_ = 1;  // dilation=1
  int64_t groups_ = 1;  // groups=1
  bool bias_ = true;    // bias=True
};

class Conv2d : public Module {
 public:
  /// weight then bias drawn uniform in (-1/sqrt(fan_in), 1/sqrt(fan_in)) from gen, with
  /// fan_in = in / groups * KH * KW: PyTorch's kaiming_uniform(a = sqrt(5)) and its bias bound.
  explicit Conv2d(const Conv2dOptions& options, Generator& gen = default_generator());
  Conv2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Generator& gen = default_generator())
      : Conv2d(Conv2dOptions(in_channels, out_channels, kernel_size), gen) {}

  /// (N, in, H, W) -> (N, out, OH, OW), or (in, H, W) -> (out, OH, OW).
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Conv2d"; }
  /// "16, 32, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1)", as PyTorch prints it.
  std::string extra_repr() const override;
  void reset_parameters(Generator& gen = default_generator());
  const Conv2dOptions& options() const { return options_; }

  Tensor weight;  // (out_channels, in_channels / groups, KH, KW)
  Tensor bias;    // (out_channels), undefined when bias = false

 private:
  Conv2dOptions options_;
};

}  // namespace minidl::nn
