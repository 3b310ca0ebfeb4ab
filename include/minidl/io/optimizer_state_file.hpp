#pragma once
// An optimizer's state_dict in a safetensors file that torch.optim loads (with the reader of
// scripts/check_optim_state_torch.py) and writes back:
//   tensors   "state.<i>.<name>" for parameter i's entries (F32; "step" is 0-dim)
//   metadata  "optimizer": the class name ("SGD", "Adam", "AdamW");
//             "param_groups": PyTorch's list of groups as JSON, here one group with its
//             options and "params": [0, 1, ..., n-1].
#include <string>

#include "minidl/optim/optimizer.hpp"

namespace minidl::io {

/// Writes optimizer.state_dict() atomically.
void save_optimizer_state(const std::string& path, const optim::Optimizer& optimizer);

/// Reads a file written above or by the torch side; also gives the "optimizer" name.
/// Throws UsageError naming the file and what is wrong (not such a file, a malformed
/// param_groups, more than one group, a tensor name outside "state.<i>.<name>", i >= n).
optim::OptimizerState read_optimizer_state(const std::string& path, std::string& optimizer_name);

/// read_optimizer_state, a check that the file is of this optimizer's class, then
/// optimizer.load_state_dict (which checks the rest).
void load_optimizer_state(const std::string& path, optim::Optimizer& optimizer);

}  // namespace minidl::io
