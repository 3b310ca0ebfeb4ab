#include "minidl/nn/sequential.hpp"

#include <string>

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

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& module : modules_) x = (*module)(x);  // through operator(): the child's hooks fire
  return x;
}

}  // namespace minidl::nn
