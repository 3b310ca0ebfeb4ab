#pragma once
// Elementwise activations as modules (nn.Tanh, nn.ReLU): no parameters, any shape.
#include "minidl/nn/module.hpp"

namespace minidl::nn {

class Tanh : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Tanh"; }
};

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "ReLU"; }
};

}  // namespace minidl::nn
