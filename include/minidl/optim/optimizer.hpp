#pragma once
// Optimizer: the parameters it updates and zero_grad; each algorithm writes step().
#include <vector>

#include "minidl/tensor/tensor.hpp"

namespace minidl::optim {

class Optimizer {
 public:
  /// params must be non-empty, defined leaf tensors (a module's parameters()).
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// One update from the gradients in each parameter's grad(); parameters without a
  /// gradient are skipped.
  virtual void step() = 0;
  /// set_to_none (the default, as Module::zero_grad and PyTorch 2.x) drops each gradient,
  /// so step() skips that parameter; otherwise the gradients are filled with zeros in
  /// place (PyTorch 1.13's default), and step() still moves it by its momentum.
  void zero_grad(bool set_to_none = true);
  const std::vector<Tensor>& params() const { return params_; }

 private:
  std::vector<Tensor> params_;
};

}  // namespace minidl::optim
