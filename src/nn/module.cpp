#include "minidl/nn/module.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {
namespace {

// Python's str.split('\n') of a non-empty text; an empty one has no lines, as in __repr__.
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  if (text.empty()) return lines;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  lines.push_back(text.substr(start));
  return lines;
}

// PyTorch's remove_duplicate=True: a tensor reached twice (a module used twice, tied
// weights) is listed once, under its first name, so an optimizer steps it once.
NamedTensors without_duplicates(NamedTensors named) {
  std::unordered_set<const TensorImpl*> seen;
  NamedTensors out;
  for (auto& entry : named)
    if (seen.insert(entry.second.impl()).second) out.push_back(std::move(entry));
  return out;
}

}  // namespace

RemovableHandle Module::register_forward_pre_hook(ForwardPreHook hook) {
  if (!hooks_) hooks_ = std::make_unique<Hooks>();
  const uint64_t id = hooks_->pre->add(std::move(hook));
  return RemovableHandle(std::weak_ptr<minidl::detail::HookRemover>(hooks_->pre), id);
}

RemovableHandle Module::register_forward_hook(ForwardHook hook) {
  if (!hooks_) hooks_ = std::make_unique<Hooks>();
  const uint64_t id = hooks_->post->add(std::move(hook));
  return RemovableHandle(std::weak_ptr<minidl::detail::HookRemover>(hooks_->post), id);
}

Tensor Module::call_with_hooks(const Tensor& given, const std::function<Tensor(const Tensor&)>& forward_of) {
  // The lists stay alive while their hooks run, even if a hook removes itself.
  const std::shared_ptr<HookList<ForwardPreHook>> pre = hooks_->pre;
  const std::shared_ptr<HookList<ForwardHook>> post = hooks_->post;
  Tensor input = given;
  if (!pre->empty())
    for (const ForwardPreHook& hook : pre->hooks())
      if (Tensor replaced = hook(*this, input); replaced.defined()) input = std::move(replaced);
  Tensor output = forward_of ? forward_of(input) : forward(input);
  if (!post->empty())
    for (const ForwardHook& hook : post->hooks())
      if (Tensor replaced = hook(*this, input, output); replaced.defined()) output = std::move(replaced);
  return output;
}

Tensor Module::register_parameter(const std::string& name, Tensor value) {
  if (value.defined()) value.requires_grad_(true);
  parameters_.emplace_back(name, value);
  return value;
}

Tensor Module::register_buffer(const std::string& name, Tensor value, DType dtype) {
  buffers_.push_back({name, value, dtype});
  return value;
}

NamedTensors Module::named_parameters() const {
  NamedTensors out;
  for (const auto& [name, value] : parameters_)
    if (value.defined()) out.emplace_back(name, value);
  for (const auto& [child_name, child] : children_)
    for (auto& [name, value] : child->named_parameters()) out.emplace_back(child_name + "." + name, value);
  return without_duplicates(std::move(out));
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;  // named_parameters() already lists a tied tensor once
  for (auto& entry : named_parameters()) out.push_back(entry.second);
  return out;
}

NamedTensors Module::named_buffers() const {
  NamedTensors out;
  for (const Buffer& buffer : buffers_)
    if (buffer.value.defined()) out.emplace_back(buffer.name, buffer.value);
  for (const auto& [child_name, child] : children_)
    for (auto& [name, value] : child->named_buffers()) out.emplace_back(child_name + "." + name, value);
  return without_duplicates(std::move(out));
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::zero_grad(bool set_to_none) {
  for (Tensor& p : parameters()) {
    if (set_to_none) p.zero_grad();
    else if (Tensor g = p.grad(); g.defined()) g.zero_();
  }
}

void Module::collect_state(const std::string& prefix, StateDict& out) const {
  for (const auto& [name, value] : parameters_)
    if (value.defined()) out.push_back({prefix + name, value, DType::F32});
  for (const Buffer& buffer : buffers_)
    if (buffer.value.defined()) out.push_back({prefix + buffer.name, buffer.value, buffer.dtype});
  for (const auto& [child_name, child] : children_) child->collect_state(prefix + child_name + ".", out);
}

StateDict Module::state_dict() const {
  StateDict out;
  collect_state("", out);
  return out;
}

void Module::fill_missing_states(const std::string& prefix, StateDict& state) const {
  fill_missing_state(prefix, state);
  for (const auto& [child_name, child] : children_) child->fill_missing_states(prefix + child_name + ".", state);
}

void Module::load_state_dict(const StateDict& given_state, bool strict) {
  StateDict state = given_state;  // shares the tensors; only entries a module fills in are new
  fill_missing_states("", state);
  StateDict own = state_dict();
  std::map<std::string, const StateEntry*> given;
  for (const StateEntry& entry : state) given[entry.name] = &entry;
  std::vector<std::string> missing, unexpected;
  std::set<std::string> known;
  for (const StateEntry& entry : own) {
    known.insert(entry.name);
    auto found = given.find(entry.name);
    if (found == given.end()) {
      missing.push_back(entry.name);
      continue;
    }
    const Tensor& source = found->second->value;
    if (source.shape() != entry.value.shape())
      throw Error(cat("load_state_dict: size mismatch for ", entry.name, ": copying a param with shape ",
                      to_string(source.shape()), ", the shape in the current model is ",
                      to_string(entry.value.shape())));
  }
  for (const StateEntry& entry : state)
    if (!known.count(entry.name)) unexpected.push_back(entry.name);
  if (strict && (!missing.empty() || !unexpected.empty())) {
    std::string message = cat("load_state_dict: error(s) in loading state_dict for ", type_name(), ":");
    auto list = [](const std::vector<std::string>& names) {
      std::string text;
      for (const std::string& n : names) text += (text.empty() ? "\"" : ", \"") + n + "\"";
      return text;
    };
    if (!missing.empty()) message += " missing key(s) in state_dict: " + list(missing) + ".";
    if (!unexpected.empty()) message += " unexpected key(s) in state_dict: " + list(unexpected) + ".";
    throw Error(message);
  }
  // Only now copy, so a refused load leaves the module as it was. Under no_grad, as
  // PyTorch loads: the copies are writes into parameters, not part of any graph.
  NoGradGuard no_grad;
  for (StateEntry& entry : own) {
    auto found = given.find(entry.name);
    if (found != given.end()) entry.value.copy_(found->second->value);
  }
}

// PyTorch's Module.__repr__: extra_repr's lines, then the children's, one per line inside
// the parentheses; a single extra_repr line with no children stays on the type's line.
std::string Module::repr() const {
  std::vector<std::string> lines = split_lines(extra_repr());
  const std::vector<std::string> children = child_lines();
  if (lines.size() == 1 && children.empty()) return type_name() + "(" + lines.front() + ")";
  lines.insert(lines.end(), children.begin(), children.end());
  std::string out = type_name() + "(";
  for (const std::string& line : lines) out += "\n  " + line;
  return out + (lines.empty() ? ")" : "\n)");
}

std::vector<std::string> Module::child_lines() const {
  std::vector<std::string> lines;
  for (const auto& [name, child] : children_) lines.push_back(child_line(name, child->repr()));
  return lines;
}

std::string Module::child_line(const std::string& key, const std::string& child_repr) {
  std::string out = "(" + key + "): ";
  for (char c : child_repr) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

std::ostream& operator<<(std::ostream& out, const Module& module) { return out << module.repr(); }

}  // namespace minidl::nn
