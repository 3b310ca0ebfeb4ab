#pragma once
// An optimizer's state_dict in PyTorch's structure: the state of each parameter by index
// ("momentum_buffer"; "step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq") and the options of
// its one parameter group ("lr", "betas", ...), as torch.optim.Optimizer.state_dict() gives.
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "minidl/tensor/tensor.hpp"

namespace minidl::optim {

/// A parameter group's option: a flag (nesterov, amsgrad), a number (lr, eps) or a tuple (betas).
using OptionValue = std::variant<bool, double, std::vector<double>>;

struct OptimizerState {
  /// state[i]: parameter i's tensors by PyTorch's names; empty until its first step.
  std::vector<std::map<std::string, Tensor>> state;
  /// The group's options by PyTorch's names ("params" is implied: 0 .. state.size() - 1).
  std::map<std::string, OptionValue> param_group;
};

}  // namespace minidl::optim
