#pragma once
// ModuleList and ModuleDict, as torch.nn's: modules held for their names in the state_dict
// ("h.0.attn...", "transformer.wte...") and called by their owner, one by one. Neither has a
// forward of its own.
//
//   auto h = register_module("h", std::make_shared<nn::ModuleList>());
//   for (int i = 0; i < 4; ++i) h->append(std::make_shared<Block>(options));
//   for (const auto& block : *h) x = (*block)(x);            // or h->at<Block>(i).forward(x, mask)
#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "minidl/nn/module.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

[[noreturn]] void throw_wrong_module_type(const std::string& where, const Module& child);
/// The child as its own type; throws naming `where` and the child's type otherwise.
template <typename M>
requires std::derived_from<M, Module> M& module_as(Module& child, const std::string& where) {
  if (M* typed = dynamic_cast<M*>(&child)) return *typed;
  throw_wrong_module_type(where, child);
}

/// nn.ModuleList: children named "0", "1", ... in the order appended. Printed as PyTorch 2.x
/// prints it, a run of children that print alike once: "(0-5): 6 x Block(...)".
class ModuleList : public Module {
 public:
  /// Appends `module` under the name of its position and returns it.
  template <typename M>
  std::shared_ptr<M> append(std::shared_ptr<M> module) {
    modules_.push_back(register_module(std::to_string(modules_.size()), module));
    return module;
  }
  int64_t size() const { return int64_t(modules_.size()); }
  /// The i-th module, counting from the end when i < 0 (Python's list[-1]); an index out of
  /// range is an error naming it and the size.
  const std::shared_ptr<Module>& operator[](int64_t i) const;
  /// The i-th module as its own type, list.at<Block>(0).
  template <typename M>
  M& at(int64_t i) const {
    return module_as<M>(*(*this)[i], cat("ModuleList::at: module ", i));
  }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

  Tensor forward(const Tensor& input) override;  // an error: the owner calls the modules
  std::string type_name() const override { return "ModuleList"; }

 protected:
  std::vector<std::string> child_lines() const override;

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

/// nn.ModuleDict: children under the keys given, in insertion order (named_children() lists them).
class ModuleDict : public Module {
 public:
  /// Adds `module` under `key` and returns it; a key already present is an error.
  template <typename M>
  std::shared_ptr<M> insert(const std::string& key, std::shared_ptr<M> module) {
    check_new_key(key);
    return register_module(key, std::move(module));
  }
  int64_t size() const { return int64_t(named_children().size()); }
  bool contains(const std::string& key) const;
  /// The module under `key`; a missing key is an error naming it and the keys there are.
  std::shared_ptr<Module> operator[](const std::string& key) const;
  template <typename M>
  M& at(const std::string& key) const {
    return module_as<M>(*(*this)[key], cat("ModuleDict::at: module \"", key, "\""));
  }
  std::vector<std::string> keys() const;

  Tensor forward(const Tensor& input) override;  // an error: the owner calls the modules
  std::string type_name() const override { return "ModuleDict"; }

 private:
  void check_new_key(const std::string& key) const;
};

}  // namespace minidl::nn
