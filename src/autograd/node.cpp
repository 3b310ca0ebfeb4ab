#include "minidl/autograd/node.hpp"

#include "minidl/autograd/grad_mode.hpp"
#include "tensor/small_blocks.hpp"

namespace minidl {

namespace {

// Moves out of `inputs` every producer node that only this edge keeps alive, so the
// caller destroys it in a loop instead of recursively.
void detach_inputs(std::vector<std::shared_ptr<TensorImpl>>& inputs, std::vector<std::shared_ptr<Node>>& pending) {
  for (auto& input : inputs) {
    if (input && input.use_count() == 1 && input->grad_fn && input->grad_fn.use_count() == 1)
      pending.push_back(std::move(input->grad_fn));
    input.reset();
  }
  inputs.clear();
}

}  // namespace

Node::~Node() {
  std::vector<std::shared_ptr<Node>> pending;
  detach_inputs(inputs, pending);
  while (!pending.empty()) {
    std::shared_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    detach_inputs(node->inputs, pending);
    // `node` dies here with no inputs left, so its destructor does not recurse.
  }
}

bool needs_grad(std::span<const Tensor> inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor& input : inputs)
    if (input.defined() && input.requires_grad()) return true;
  return false;
}

Tensor record(Tensor out, const char* name, std::span<const Tensor> inputs, BackwardFn backward) {
  if (!needs_grad(inputs)) return out;
  auto node = detail::make_pooled<Node>();  // from the free lists
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
