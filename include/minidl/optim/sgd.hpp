#pragma once
// Stochastic gradient descent with PyTorch's options, step for step as torch.optim.SGD.
#include <limits>
#include <vector>

#include "minidl/optim/optimizer.hpp"

namespace minidl::optim {

struct SGDOptions {
  /// lr's value until one is given: SGD refuses it.
  static constexpr double kRequired = std::numeric_limits<double>::quiet_NaN();
  double lr = kRequired;  // required (no default, as PyTorch's SGD), >= 0
  double momentum = 0.0;  // >= 0
  double dampening = 0.0;
  double weight_decay = 0.0;  // >= 0 (L2 penalty)
  bool nesterov = false;      // needs momentum > 0 and dampening == 0
  bool maximize = false;      // ascend instead of descend
};

/// For each parameter p with gradient g:
///   g = -g if maximize;  g += weight_decay p;
///   momentum: b = g on p's first step, else b = momentum b + (1 - dampening) g;
///             g = g + momentum b if nesterov, else g = b;
///   p -= lr g.
/// The momentum buffers are allocated on a parameter's first step and reused after.
class SGD : public Optimizer {
 public:
  /// Throws UsageError naming the option and its value for a missing or negative lr, a
  /// negative momentum or weight_decay, or nesterov without momentum > 0 and dampening == 0.
  /// lr = 0 is allowed, as in PyTorch.
  SGD(std::vector<Tensor> params, SGDOptions options);

  void step() override;
  const SGDOptions& options() const { return options_; }
  std::string type_name() const override { return "SGD"; }
  double lr() const override { return options_.lr; }
  void set_lr(double lr) override;
  /// state[i]["momentum_buffer"] once parameter i has one; param_group: lr, momentum,
  /// dampening, weight_decay, nesterov, maximize.
  OptimizerState state_dict() const override;
  void load_state_dict(const OptimizerState& state) override;
  /// Parameter i's momentum buffer (PyTorch's state[p]["momentum_buffer"]): undefined
  /// until its first step with momentum != 0, then updated in place.
  const Tensor& momentum_buffer(size_t i) const;

 private:
  SGDOptions options_;
  std::vector<Tensor> momentum_buffers_;  // one per parameter, undefined until its first step
};

}  // namespace minidl::optim
