#include "minidl/nn/containers.hpp"

#include <algorithm>

namespace minidl::nn {

void throw_wrong_module_type(const std::string& where, const Module& child) {
  throw Error(cat(where, " is a ", child.type_name(), ", not the type asked for"));
}

const std::shared_ptr<Module>& ModuleList::operator[](int64_t i) const {
  const int64_t at = i < 0 ? i + size() : i;
  if (at < 0 || at >= size())
    throw Error(cat("ModuleList: index ", i, " is out of range for a ModuleList of size ", size()));
  return modules_[size_t(at)];
}

Tensor ModuleList::forward(const Tensor& /*input*/) {
  throw Error("ModuleList: it has no forward; call its modules one by one");
}

// PyTorch 2.x's ModuleList repr: a run of children that print alike prints once,
// "(0-5): 6 x TransformerEncoderLayer(...)", so a deep stack fits on a screen.
std::vector<std::string> ModuleList::child_lines() const {
  std::vector<std::string> reprs;
  for (const auto& module : modules_) reprs.push_back(module->repr());
  std::vector<std::string> lines;
  for (size_t start = 0; start < reprs.size();) {
    size_t end = start + 1;
    while (end < reprs.size() && reprs[end] == reprs[start]) ++end;
    const size_t count = end - start;
    lines.push_back(count == 1 ? child_line(std::to_string(start), reprs[start])
                               : child_line(cat(start, "-", end - 1), cat(count, " x ", reprs[start])));
    start = end;
  }
  return lines;
}

bool ModuleDict::contains(const std::string& key) const {
  const auto children = named_children();
  return std::any_of(children.begin(), children.end(), [&](const auto& child) { return child.first == key; });
}

std::shared_ptr<Module> ModuleDict::operator[](const std::string& key) const {
  for (const auto& [name, child] : named_children())
    if (name == key) return child;
  std::string keys;
  for (const std::string& name : this->keys()) keys += (keys.empty() ? "" : ", ") + name;
  throw Error(cat("ModuleDict: no module under the key \"", key, "\"; its keys: ", keys.empty() ? "none" : keys));
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> keys;
  for (const auto& [name, child] : named_children()) keys.push_back(name);
  return keys;
}

void ModuleDict::check_new_key(const std::string& key) const {
  if (contains(key)) throw Error(cat("ModuleDict::insert: the key \"", key, "\" is taken"));
}

Tensor ModuleDict::forward(const Tensor& /*input*/) {
  throw Error("ModuleDict: it has no forward; call its modules one by one");
}

}  // namespace minidl::nn
