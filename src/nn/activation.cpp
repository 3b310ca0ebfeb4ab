#include "minidl/nn/activation.hpp"

#include "minidl/ops/unary.hpp"

namespace minidl::nn {

Tensor Tanh::forward(const Tensor& input) { return tanh(input); }

Tensor ReLU::forward(const Tensor& input) { return relu(input); }

}  // namespace minidl::nn
