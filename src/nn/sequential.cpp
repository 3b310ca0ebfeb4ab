#include "minidl/nn/sequential.hpp"

#include <string>
#include <typeinfo>

#include "minidl/nn/activation.hpp"
#include "minidl/nn/linear.hpp"
#include "minidl/nn/norm/group_norm.hpp"
#include "minidl/nn/norm/layer_norm.hpp"
#include "minidl/nn/norm/rms_norm.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto& module : modules) push_back(module);
}

void Sequential::push_back(std::shared_ptr<Module> module) {
  if (!module) throw Error(cat("Sequential::push_back: expected a module, got a null pointer at position ", size()));
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

std::shared_ptr<Module> Sequential::operator[](size_t i) const {
  if (i >= modules_.size())
    throw Error(cat("Sequential: index ", i, " is out of range for a Sequential of ", modules_.size(), " modules"));
  return modules_[i];
}

void Sequential::throw_wrong_type(size_t i, const Module& child) {
  throw Error(cat("Sequential::at: child ", i, " is a ", child.type_name(), ", not the type asked for"));
}

namespace {

// x through `first` and then through tanh as one op, when `first` is exactly an M.
template <typename M>
bool forward_tanh_as(Module& first, Tensor& x) {
  if (typeid(first) != typeid(M)) return false;
  x = static_cast<M&>(first).forward_tanh(x);
  return true;
}

// A Linear or a row norm (LayerNorm, RMSNorm, GroupNorm) followed by a Tanh, each exactly
// that type and without hooks (a hook would see the first one's output, which the fused op
// never makes): then one op (linear_tanh, layer_norm_tanh, ...) does both, with the same
// bits. False when not fusable.
bool forward_with_tanh(Module& first, Module& second, Tensor& x) {
  if (typeid(second) != typeid(Tanh) || first.has_hooks() || second.has_hooks()) return false;
  return forward_tanh_as<Linear>(first, x) || forward_tanh_as<LayerNorm>(first, x) ||
         forward_tanh_as<RMSNorm>(first, x) || forward_tanh_as<GroupNorm>(first, x);
}

}  // namespace

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (i + 1 < modules_.size() && forward_with_tanh(*modules_[i], *modules_[i + 1], x)) {
      ++i;
      continue;
    }
    x = (*modules_[i])(x);  // through operator(): the child's hooks fire
  }
  return x;
}

Tensor Sequential::forward_unfused(const Tensor& input) {
  Tensor x = input;
  for (const auto& module : modules_) x = (*module)(x);
  return x;
}

}  // namespace minidl::nn
