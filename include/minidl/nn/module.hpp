#pragma once
// Module: the base of every layer, in PyTorch's shape. A subclass registers its
// parameters, buffers and children by name in its constructor and writes forward().
#include <concepts>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "minidl/autograd/hooks.hpp"
#include "minidl/tensor/dtype.hpp"
#include "minidl/tensor/tensor.hpp"

namespace minidl::nn {

/// How a state_dict entry is stored in a checkpoint (minidl/tensor/dtype.hpp).
using DType = minidl::DType;

struct StateEntry {
  std::string name;  // PyTorch's dotted name: "0.weight", "1.running_mean"
  Tensor value;      // shares storage with the module's tensor
  DType dtype = DType::F32;
};
using StateDict = std::vector<StateEntry>;

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Module;
/// Runs before forward with the input; returns the input forward gets instead, or an
/// undefined Tensor to keep it (PyTorch's None).
using ForwardPreHook = std::function<Tensor(Module& module, const Tensor& input)>;
/// Runs after forward with the input forward got and its output; returns a replacement
/// output, or an undefined Tensor to keep it.
using ForwardHook = std::function<Tensor(Module& module, const Tensor& input, const Tensor& output)>;

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  /// Movable: a layer built by value (nn::Linear(64, 10)) moves into a Sequential. Its
  /// tensors are handles, so they move with it.
  Module(Module&&) = default;
  Module& operator=(Module&&) = default;

  virtual Tensor forward(const Tensor& input) = 0;
  /// forward with this module's hooks around it; containers call their children this way,
  /// so hooks fire in call order. Without hooks (none registered, or all removed), forward alone.
  Tensor operator()(const Tensor& input) { return has_hooks() ? call_with_hooks(input, nullptr) : forward(input); }
  /// A forward that takes more than the input (a mask beside it, as PyTorch's forward(x, mask)),
  /// called as operator() calls forward: the hooks see the input, `forward_of` gets it.
  ///   norm.call(x, [&](const Tensor& in) { return norm.forward(in, mask); })
  Tensor call(const Tensor& input, const std::function<Tensor(const Tensor&)>& forward_of) {
    return has_hooks() ? call_with_hooks(input, forward_of) : forward_of(input);
  }
  /// Whether a forward hook or pre-hook is registered here now (a removed one no longer
  /// counts): a container fuses a child with the next (nn::Sequential's Linear + Tanh) only
  /// when neither has one.
  bool has_hooks() const { return hooks_ && !(hooks_->pre->empty() && hooks_->post->empty()); }

  /// PyTorch's register_forward_pre_hook and register_forward_hook: hooks run in
  /// registration order, each seeing the previous one's replacement, whether or not grad
  /// mode is on. The handle's remove() takes the hook out.
  RemovableHandle register_forward_pre_hook(ForwardPreHook hook);
  RemovableHandle register_forward_hook(ForwardHook hook);
  /// Hooks that only look (no return value).
  template <typename F>
  requires std::is_void_v<std::invoke_result_t<F&, Module&, const Tensor&>> RemovableHandle
  register_forward_pre_hook(F hook) {
    return register_forward_pre_hook(ForwardPreHook([hook = std::move(hook)](Module& m, const Tensor& x) mutable {
      hook(m, x);
      return Tensor();
    }));
  }
  template <typename F>
  requires std::is_void_v<std::invoke_result_t<F&, Module&, const Tensor&, const Tensor&>> RemovableHandle
  register_forward_hook(F hook) {
    return register_forward_hook(
        ForwardHook([hook = std::move(hook)](Module& m, const Tensor& x, const Tensor& y) mutable {
          hook(m, x, y);
          return Tensor();
        }));
  }

  /// The class name PyTorch prints ("Linear", "BatchNorm1d").
  virtual std::string type_name() const = 0;
  /// What goes between the parentheses of repr: "in_features=64, out_features=10, bias=True".
  virtual std::string extra_repr() const { return ""; }
  /// PyTorch's repr, the text print(model) shows: the type, then extra_repr's lines and the
  /// children's, named and indented. `std::cout << model` prints it too.
  std::string repr() const;

  /// Recursive, dotted names; a tensor reached twice (the same module in two places, tied
  /// weights) is listed once under its first name, as PyTorch's remove_duplicate=True.
  std::vector<Tensor> parameters() const;
  NamedTensors named_parameters() const;
  NamedTensors named_buffers() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const { return children_; }

  /// Sets training mode here and in every child.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  /// Drops every parameter's gradient (set_to_none, PyTorch 2.x's default), or with
  /// set_to_none = false fills them with zeros in place (1.13's default).
  void zero_grad(bool set_to_none = true);

  /// Parameters then buffers of each module, then its children's, as PyTorch orders them.
  /// Unlike parameters(), a shared tensor keeps every name ("0.weight" and "2.weight").
  StateDict state_dict() const;
  /// Copies values in place. strict: a missing or unexpected name is an error; a wrong
  /// shape is always an error. Messages name the entry.
  void load_state_dict(const StateDict& state, bool strict = true);

 protected:
  /// Registers a parameter (it is made to require grad) and returns it.
  Tensor register_parameter(const std::string& name, Tensor value);
  Tensor register_buffer(const std::string& name, Tensor value, DType dtype = DType::F32);
  /// Adds what this module accepts as missing to a state about to be loaded (BatchNorm's
  /// num_batches_tracked, as PyTorch's _load_from_state_dict); `prefix` names this module.
  virtual void fill_missing_state(const std::string& /*prefix*/, StateDict& /*state*/) const {}
  /// The children's lines of repr, one "(name): Child(...)" each; a container may group them
  /// (ModuleList's "(0-1): 2 x Layer(...)").
  virtual std::vector<std::string> child_lines() const;
  /// "(key): " and a child's repr, its later lines moved right two spaces (Python's _addindent).
  static std::string child_line(const std::string& key, const std::string& child_repr);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    children_.emplace_back(name, module);
    return module;
  }

 private:
  struct Buffer {
    std::string name;
    Tensor value;
    DType dtype;
  };
  struct Hooks {
    std::shared_ptr<HookList<ForwardPreHook>> pre = std::make_shared<HookList<ForwardPreHook>>();
    std::shared_ptr<HookList<ForwardHook>> post = std::make_shared<HookList<ForwardHook>>();
  };
  // forward_of null: forward.
  Tensor call_with_hooks(const Tensor& input, const std::function<Tensor(const Tensor&)>& forward_of);
  void collect_state(const std::string& prefix, StateDict& out) const;
  void fill_missing_states(const std::string& prefix, StateDict& state) const;

  bool training_ = true;
  NamedTensors parameters_;
  std::vector<Buffer> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  std::unique_ptr<Hooks> hooks_;  // null until a hook is registered: operator() then costs one test
};

/// Prints module.repr(): print(model)'s text. libtorch prints the same tree in its own words
/// ("torch::nn::Linear(..., bias=true)"); minidl keeps PyTorch's, which its tests check.
std::ostream& operator<<(std::ostream& out, const Module& module);

/// The same for a model held by pointer, so `std::cout << model` prints the tree and not the
/// address std::shared_ptr's own operator<< would; a null pointer prints "nullptr".
template <typename M>
requires std::derived_from<M, Module> std::ostream& operator<<(std::ostream& out, const std::shared_ptr<M>& module) {
  if (!module) return out << "nullptr";
  return out << static_cast<const Module&>(*module);
}

}  // namespace minidl::nn
