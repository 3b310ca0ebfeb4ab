#include "minidl/nn/activation.hpp"

#include "minidl/ops/activation.hpp"
#include "minidl/ops/unary.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

Tensor Tanh::forward(const Tensor& input) { return tanh(input); }

Tensor ReLU::forward(const Tensor& input) { return relu(input); }

GELU::GELU(std::string approximate) : approximate_(std::move(approximate)) {
  if (approximate_ != "none" && approximate_ != "tanh")
    throw Error(cat("GELU: approximate argument must be either none or tanh., got \"", approximate_, "\""));
}

Tensor GELU::forward(const Tensor& input) { return gelu(input, approximate_); }

Tensor SiLU::forward(const Tensor& input) { return silu(input); }

}  // namespace minidl::nn
