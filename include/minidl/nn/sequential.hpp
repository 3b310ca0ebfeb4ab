#pragma once
// Sequential: children named "0", "1", ... in order, each fed the previous one's output,
// exactly like nn.Sequential (so state_dict names match PyTorch's).
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <vector>

#include "minidl/nn/module.hpp"

namespace minidl::nn {

class Sequential : public Module {
 public:
  Sequential() = default;
  /// Sequential({std::make_shared<Linear>(64, 10), std::make_shared<Tanh>()})
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  /// std::make_shared<Sequential>(linear, tanh, ...)
  template <typename... Ms>
    requires(sizeof...(Ms) > 0 && (std::derived_from<Ms, Module> && ...))
  explicit Sequential(std::shared_ptr<Ms>... modules) {
    (push_back(std::move(modules)), ...);
  }

  /// Appends a child named after its position.
  void push_back(std::shared_ptr<Module> module);
  size_t size() const { return modules_.size(); }
  bool empty() const { return modules_.empty(); }
  /// The i-th child; throws naming i and the size when out of range.
  std::shared_ptr<Module> operator[](size_t i) const;

  /// Runs the children in order; an empty Sequential returns its input.
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Sequential"; }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

}  // namespace minidl::nn
