#pragma once
// Optimizer: the parameters it updates, zero_grad, the learning rate a schedule changes, and
// the state_dict a resumed run loads; each algorithm writes step() and its state.
#include <optional>
#include <string>
#include <vector>

#include "minidl/optim/optimizer_state.hpp"
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

  /// PyTorch's class name: "SGD", "Adam", "AdamW".
  virtual std::string type_name() const = 0;
  /// The learning rate of the next step (param_groups[0]["lr"]).
  virtual double lr() const = 0;
  /// Changes the learning rate for the following steps (a schedule's hook); throws
  /// UsageError for a negative or NaN lr.
  virtual void set_lr(double lr) = 0;
  /// The lr a schedule starts from (param_groups[0]["initial_lr"]): set by the first
  /// schedule built on this optimizer and kept by the next ones, as PyTorch's setdefault.
  std::optional<double> initial_lr() const { return initial_lr_; }
  void set_initial_lr(std::optional<double> lr) { initial_lr_ = lr; }

  /// The state in PyTorch's structure; its tensors share storage with the optimizer's.
  virtual OptimizerState state_dict() const = 0;
  /// Takes a state_dict() of an optimizer of the same kind over parameters of the same
  /// shapes (copies its tensors), options included, as torch's load_state_dict. Throws
  /// UsageError naming the parameter, the entry and both shapes on any mismatch, an
  /// unknown or missing entry, or an option of the wrong kind or value.
  virtual void load_state_dict(const OptimizerState& state) = 0;

 protected:
  /// Adds "initial_lr" to a state_dict's group when a schedule set it.
  void add_initial_lr(OptimizerState& state) const;
  /// The group's "initial_lr", if any, checked to be a number (to apply after the other checks).
  std::optional<double> loaded_initial_lr(const OptimizerState& state, const char* who) const;

 private:
  std::vector<Tensor> params_;
  std::optional<double> initial_lr_;
};

}  // namespace minidl::optim
