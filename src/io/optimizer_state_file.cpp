#include "minidl/io/optimizer_state_file.hpp"

#include <nlohmann/json.hpp>

#include "minidl/io/safetensors.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::io {
namespace {

using nlohmann::json;

json option_to_json(const optim::OptionValue& value) {
  if (const bool* flag = std::get_if<bool>(&value)) return *flag;
  if (const double* number = std::get_if<double>(&value)) return *number;
  return std::get<std::vector<double>>(value);
}

optim::OptionValue option_from_json(const json& value, const std::string& key, const std::string& path) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number()) return value.get<double>();
  if (value.is_array()) {
    std::vector<double> tuple;
    for (const json& v : value) {
      if (!v.is_number()) throw UsageError(cat(path, ": param_groups option ", key, " holds a non-number"));
      tuple.push_back(v.get<double>());
    }
    return tuple;
  }
  throw UsageError(
      cat(path, ": param_groups option ", key, " is ", value.dump(), " (expected a flag, a number or a list)"));
}

// "state.<i>.<name>" -> (i, name); throws for any other tensor name.
std::pair<size_t, std::string> state_key(const std::string& name, size_t params, const std::string& path) {
  const bool prefixed = name.rfind("state.", 0) == 0;
  const size_t dot = prefixed ? name.find('.', 6) : std::string::npos;
  const std::string index = dot == std::string::npos ? std::string() : name.substr(6, dot - 6);
  if (dot == std::string::npos || index.empty() || index.find_first_not_of("0123456789") != std::string::npos ||
      dot + 1 == name.size())
    throw UsageError(cat(path, ": tensor ", name, " is not named state.<parameter index>.<entry>"));
  // More digits than any parameter count: out of range without overflowing stoull.
  const size_t i = index.size() > 18 ? params : size_t(std::stoull(index));
  if (i >= params)
    throw UsageError(
        cat(path, ": tensor ", name, " is for parameter ", index, " but the group has ", params, " parameters"));
  return {i, name.substr(dot + 1)};
}

}  // namespace

void save_optimizer_state(const std::string& path, const optim::Optimizer& optimizer) {
  const optim::OptimizerState state = optimizer.state_dict();
  nn::StateDict tensors;
  for (size_t i = 0; i < state.state.size(); ++i)
    for (const auto& [name, value] : state.state[i]) tensors.push_back({cat("state.", i, ".", name), value});
  json group = json::object();
  for (const auto& [key, value] : state.param_group) group[key] = option_to_json(value);
  std::vector<size_t> indices(state.state.size());
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = i;
  group["params"] = indices;
  save_safetensors(path, tensors,
                   {{"optimizer", optimizer.type_name()}, {"param_groups", json::array({group}).dump()}});
}

optim::OptimizerState read_optimizer_state(const std::string& path, std::string& optimizer_name) {
  Metadata metadata;
  const nn::StateDict tensors = load_safetensors(path, metadata);
  if (!metadata.count("param_groups") || !metadata.count("optimizer"))
    throw UsageError(cat(path, ": not an optimizer state (its metadata has no optimizer and param_groups entries)"));
  optimizer_name = metadata.at("optimizer");
  json groups;
  try {
    groups = json::parse(metadata.at("param_groups"));
  } catch (const json::exception& e) {
    throw UsageError(cat(path, ": param_groups is not valid JSON: ", e.what()));
  }
  if (!groups.is_array() || groups.size() != 1 || !groups[0].is_object())
    throw UsageError(cat(path, ": expected param_groups to be a list of one group (minidl's optimizers have one), got ",
                         groups.is_array() ? cat(groups.size(), " groups") : std::string("no list")));
  const json& group = groups[0];
  if (!group.contains("params") || !group["params"].is_array())
    throw UsageError(cat(path, ": the param group has no params list"));
  const json& params = group["params"];
  for (size_t i = 0; i < params.size(); ++i)
    if (!params[i].is_number_integer() || params[i].get<int64_t>() != int64_t(i))
      throw UsageError(cat(path, ": the group's params should be 0, 1, ..., ", params.size() - 1, "; entry ", i, " is ",
                           params[i].dump()));
  optim::OptimizerState state;
  state.state.resize(params.size());
  for (const auto& [key, value] : group.items())
    if (key != "params" && !value.is_null()) state.param_group[key] = option_from_json(value, key, path);
  for (const nn::StateEntry& entry : tensors) {
    const auto [i, name] = state_key(entry.name, params.size(), path);
    state.state[i][name] = entry.value;
  }
  return state;
}

void load_optimizer_state(const std::string& path, optim::Optimizer& optimizer) {
  std::string name;
  const optim::OptimizerState state = read_optimizer_state(path, name);
  if (name != optimizer.type_name())
    throw UsageError(cat(path, ": holds the state of ", name, ", not of ", optimizer.type_name()));
  optimizer.load_state_dict(state);
}

}  // namespace minidl::io
