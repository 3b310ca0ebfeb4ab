#include "minidl/nn/sequential.hpp"

#include <string>
#include <typeinfo>

#include "minidl/nn/activation.hpp"
#include "minidl/nn/linear.hpp"
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

// A Linear followed by a Tanh, both exactly those types and without hooks (a hook would see
// the Linear's output, which the fused op never makes): then one linear_tanh does both.
Linear* fusable_linear(Module& first, Module& second) {
  if (typeid(first) != typeid(Linear) || typeid(second) != typeid(Tanh)) return nullptr;
  if (first.has_hooks() || second.has_hooks()) return nullptr;
  return static_cast<Linear*>(&first);
}

}  // namespace

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (i + 1 < modules_.size()) {
      if (Linear* linear = fusable_linear(*modules_[i], *modules_[i + 1])) {
        x = linear->forward_tanh(x);  // the same bits as the two modules apart
        ++i;
        continue;
      }
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
