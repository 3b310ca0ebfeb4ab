#pragma once
// Sequential: children named "0", "1", ... in order, each fed the previous one's output,
// exactly like nn.Sequential (so state_dict names match PyTorch's).
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "minidl/nn/module.hpp"

namespace minidl::nn {

namespace detail {
template <typename T>
struct is_module_pointer : std::false_type {};
template <typename M>
struct is_module_pointer<std::shared_ptr<M>> : std::bool_constant<std::derived_from<M, Module>> {};
}  // namespace detail

/// A child for Sequential: a std::shared_ptr to a module, or a module given by value (moved).
template <typename M>
concept ModuleArgument = detail::is_module_pointer<std::remove_cvref_t<M>>::value ||
    (std::derived_from<std::remove_cvref_t<M>, Module> && !std::is_lvalue_reference_v<M>);

class Sequential : public Module {
 public:
  Sequential() = default;
  /// Sequential({std::make_shared<Linear>(64, 10), std::make_shared<Tanh>()})
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  /// Sequential(nn::Linear(64, 10), nn::Tanh()), or from shared pointers (a module shared
  /// with other code), or both mixed, as torch::nn::Sequential.
  template <typename... Ms>
  requires(sizeof...(Ms) > 0 && (ModuleArgument<Ms> && ...)) explicit Sequential(Ms&&... modules) {
    (push_back(hold(std::forward<Ms>(modules))), ...);
  }

  /// Appends a child named after its position.
  void push_back(std::shared_ptr<Module> module);
  size_t size() const { return modules_.size(); }
  bool empty() const { return modules_.empty(); }
  /// The i-th child; throws naming i and the size when out of range.
  std::shared_ptr<Module> operator[](size_t i) const;
  /// The i-th child as its own type, seq.at<nn::Linear>(0); throws naming i, the child's
  /// type and the size when i is out of range or the child is another type.
  template <typename M>
  requires std::derived_from<M, Module> M& at(size_t i) const {
    const std::shared_ptr<Module> child = (*this)[i];
    if (M* typed = dynamic_cast<M*>(child.get())) return *typed;
    throw_wrong_type(i, *child);
  }

  /// Runs the children in order, each through its operator() (so its hooks fire); an empty
  /// Sequential returns its input.
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Sequential"; }

 private:
  template <typename M>
  static std::shared_ptr<Module> hold(M&& module) {
    if constexpr (detail::is_module_pointer<std::remove_cvref_t<M>>::value) return std::forward<M>(module);
    else return std::make_shared<std::remove_cvref_t<M>>(std::move(module));
  }
  [[noreturn]] static void throw_wrong_type(size_t i, const Module& child);

  std::vector<std::shared_ptr<Module>> modules_;
};

}  // namespace minidl::nn
