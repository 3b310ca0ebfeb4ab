#pragma once
// Checks of a state_dict handed to an optimizer's load_state_dict (private to src/optim).
#include <map>
#include <string>
#include <vector>

#include "minidl/optim/optimizer_state.hpp"

namespace minidl::optim::detail {

/// Throws unless `state` has one entry per parameter.
void check_parameter_count(const OptimizerState& state, size_t params, const char* who);

/// Parameter i's entries, after checking that they are none (not stepped yet) or exactly
/// `required` plus any of `optional`, each of the parameter's shape ("step": 0-dim).
const std::map<std::string, Tensor>& checked_entries(const OptimizerState& state, size_t i, const Tensor& param,
                                                     const char* who, const std::vector<std::string>& required,
                                                     const std::vector<std::string>& optional = {});

/// Throws for an option not in `known` (PyTorch's implementation switches foreach,
/// capturable, differentiable and fused are accepted and ignored; a schedule's initial_lr is
/// always known).
void check_option_names(const OptimizerState& state, const char* who, const std::vector<std::string>& known);

/// The group's value of `name` when present (else `current`), checked to be of its kind.
double number_option(const OptimizerState& state, const std::string& name, double current, const char* who);
bool flag_option(const OptimizerState& state, const std::string& name, bool current, const char* who);
std::vector<double> tuple_option(const OptimizerState& state, const std::string& name, std::vector<double> current,
                                 const char* who);

/// A 0-dim tensor's value as a step count: a non-negative integer.
int64_t step_count(const Tensor& step, size_t i, const char* who);

}  // namespace minidl::optim::detail
