#include "minidl/nn/pooling.hpp"

#include "minidl/ops/pool.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {
namespace {
// A square size prints as one integer, as PyTorch prints the int it was given.
std::string size_repr(Size2 s) { return s.h == s.w ? std::to_string(s.h) : to_string(s); }
}  // namespace

Tensor MaxPool2d::forward(const Tensor& input) {
  const auto& o = options_;
  return max_pool2d(input, o.kernel_size, o.stride(), o.padding(), o.dilation());
}

std::string MaxPool2d::extra_repr() const {
  const auto& o = options_;
  return cat("kernel_size=", size_repr(o.kernel_size), ", stride=", size_repr(o.stride()),
             ", padding=", size_repr(o.padding()), ", dilation=", size_repr(o.dilation()), ", ceil_mode=False");
}

Tensor AvgPool2d::forward(const Tensor& input) {
  const auto& o = options_;
  return avg_pool2d(input, o.kernel_size, o.stride(), o.padding(), o.count_include_pad());
}

std::string AvgPool2d::extra_repr() const {
  const auto& o = options_;
  std::string s = cat("kernel_size=", size_repr(o.kernel_size), ", stride=", size_repr(o.stride()),
                      ", padding=", size_repr(o.padding()));
  if (!o.count_include_pad()) s += ", count_include_pad=False";
  return s;
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& input) { return adaptive_avg_pool2d(input, output_size_); }

std::string AdaptiveAvgPool2d::extra_repr() const { return cat("output_size=", size_repr(output_size_)); }

}  // namespace minidl::nn
