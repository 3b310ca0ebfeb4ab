#pragma once
// Elementwise activations as modules (nn.Tanh, nn.ReLU, nn.GELU, nn.SiLU): no parameters,
// any shape.
#include <string>

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

/// nn.GELU(approximate="none"): approximate "none" (the erf form) or "tanh"; any other is
/// refused here, with PyTorch's message.
class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "GELU"; }
  std::string extra_repr() const override { return "approximate='" + approximate_ + "'"; }
  const std::string& approximate() const { return approximate_; }

 private:
  std::string approximate_;
};

/// nn.SiLU: x sigmoid(x).
class SiLU : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "SiLU"; }
};

}  // namespace minidl::nn
