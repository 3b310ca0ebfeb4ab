#include "state_checks.hpp"

#include <algorithm>
#include <cmath>

#include "minidl/tensor/error.hpp"

namespace minidl::optim::detail {
namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

const char* kind_of(const OptionValue& value) {
  if (std::holds_alternative<bool>(value)) return "a flag";
  if (std::holds_alternative<double>(value)) return "a number";
  return "a tuple";
}

template <typename T>
T typed_option(const OptimizerState& state, const std::string& name, T current, const char* who, const char* kind) {
  auto found = state.param_group.find(name);
  if (found == state.param_group.end()) return current;
  if (!std::holds_alternative<T>(found->second))
    throw UsageError(
        cat(who, " load_state_dict: option ", name, " should be ", kind, ", got ", kind_of(found->second)));
  return std::get<T>(found->second);
}

}  // namespace

void check_parameter_count(const OptimizerState& state, size_t params, const char* who) {
  if (state.state.size() != params)
    throw UsageError(
        cat(who, " load_state_dict: the state has ", state.state.size(), " parameters, the optimizer has ", params));
}

const std::map<std::string, Tensor>& checked_entries(const OptimizerState& state, size_t i, const Tensor& param,
                                                     const char* who, const std::vector<std::string>& required,
                                                     const std::vector<std::string>& optional) {
  const std::map<std::string, Tensor>& entries = state.state[i];
  if (entries.empty()) return entries;
  for (const auto& [name, value] : entries) {
    if (!contains(required, name) && !contains(optional, name))
      throw UsageError(cat(who, " load_state_dict: parameter ", i, " has an unknown entry ", name, " (expected ",
                           joined(required), optional.empty() ? "" : " and optionally ", joined(optional), ")"));
    const Shape expected = name == "step" ? Shape{} : param.shape();
    if (!value.defined() || value.shape() != expected)
      throw UsageError(cat(who, " load_state_dict: parameter ", i, "'s ", name, " should have shape ",
                           to_string(expected), ", got ", value.defined() ? to_string(value.shape()) : "none"));
  }
  for (const std::string& name : required)
    if (!entries.count(name)) throw UsageError(cat(who, " load_state_dict: parameter ", i, " has no ", name, " entry"));
  return entries;
}

void check_option_names(const OptimizerState& state, const char* who, const std::vector<std::string>& known) {
  static const std::vector<std::string> ignored = {"foreach", "capturable", "differentiable", "fused"};
  for (const auto& entry : state.param_group)
    if (!contains(known, entry.first) && !contains(ignored, entry.first) && entry.first != "initial_lr")
      throw UsageError(
          cat(who, " load_state_dict: unknown option ", entry.first, " (", who, " has ", joined(known), ")"));
}

double number_option(const OptimizerState& state, const std::string& name, double current, const char* who) {
  return typed_option<double>(state, name, current, who, "a number");
}

bool flag_option(const OptimizerState& state, const std::string& name, bool current, const char* who) {
  return typed_option<bool>(state, name, current, who, "a flag");
}

std::vector<double> tuple_option(const OptimizerState& state, const std::string& name, std::vector<double> current,
                                 const char* who) {
  return typed_option<std::vector<double>>(state, name, std::move(current), who, "a tuple");
}

int64_t step_count(const Tensor& step, size_t i, const char* who) {
  const float value = step.item();
  if (!(value >= 0.0f) || value != std::nearbyint(value))
    throw UsageError(cat(who, " load_state_dict: parameter ", i, "'s step should be a count >= 0, got ", value));
  return int64_t(value);
}

}  // namespace minidl::optim::detail
