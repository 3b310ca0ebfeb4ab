#include "minidl/autograd/node.hpp"

#include "minidl/autograd/grad_mode.hpp"

namespace minidl {

bool needs_grad(const std::vector<Tensor>& inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor& input : inputs)
    if (input.defined() && input.requires_grad()) return true;
  return false;
}

Tensor record(Tensor out, const char* name, const std::vector<Tensor>& inputs, BackwardFn backward) {
  if (!needs_grad(inputs)) return out;
  auto node = std::make_shared<Node>();
  node->name = name;
  node->inputs.reserve(inputs.size());
  for (const Tensor& input : inputs)
    node->inputs.push_back(input.defined() && input.requires_grad() ? input.impl_ptr() : nullptr);
  node->backward = std::move(backward);
  out.impl()->requires_grad = true;
  out.impl()->grad_fn = std::move(node);
  return out;
}

}  // namespace minidl
