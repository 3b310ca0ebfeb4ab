// Reverse-mode backward: order the graph's nodes so each comes after every node that
// uses its output, then walk that order handing each node the sum of its output's
// gradients.
#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "autograd/grad_hooks.hpp"
#include "minidl/autograd/grad_mode.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {
namespace {

// Iterative DFS post-order from the root (deep graphs must not overflow the stack);
// reversed, it puts every consumer before what it consumes.
std::vector<Node*> topological_order(Node* root) {
  static std::atomic<uint64_t> passes{0};
  const uint64_t pass = ++passes;  // marks the nodes this pass has seen
  std::vector<Node*> order;
  std::vector<std::pair<Node*, size_t>> stack;
  root->visited_by = pass;
  stack.emplace_back(root, 0);
  while (!stack.empty()) {
    auto& [node, next_input] = stack.back();
    if (next_input < node->inputs.size()) {
      const auto& input = node->inputs[next_input++];
      Node* child = input ? input->grad_fn.get() : nullptr;
      if (child != nullptr && child->visited_by != pass) {
        child->visited_by = pass;
        stack.emplace_back(child, 0);
      }
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

// True when nothing but this handle sees the tensor's values, so they may be changed in
// place or adopted (a backward may hand one tensor to two inputs, or return a view).
bool exclusively_owned(const Tensor& t) { return t.impl_ptr().use_count() == 1 && t.impl()->storage.use_count() == 1; }

void add_in_place(Tensor& dst, const Tensor& src) {
  float* d = dst.data();
  const float* s = src.data();
  for (int64_t i = 0, n = src.numel(); i < n; ++i) d[i] += s[i];
}

void accumulate(Tensor& slot, const Tensor& grad) {
  if (!slot.defined()) slot = grad;
  else if (exclusively_owned(slot)) add_in_place(slot, grad);
  else slot = add(slot, grad);
}

// `may_adopt`: `grad` is an engine temporary (a backward's result), not the caller's.
void accumulate_into_leaf(TensorImpl& leaf, const Tensor& grad, bool may_adopt) {
  if (leaf.grad) {
    Tensor existing(leaf.grad);
    add_in_place(existing, grad);
  } else if (may_adopt && exclusively_owned(grad) && !grad.requires_grad()) {
    leaf.grad = grad.impl_ptr();  // nobody else holds it: adopt instead of copying
  } else {
    leaf.grad = grad.detach().clone().impl_ptr();  // a leaf owns its gradient
  }
}

void check_gradient_shape(const Node& node, size_t i, const Tensor& grad) {
  const Shape& expected = node.inputs[i]->shape;
  if (grad.shape() != expected)
    throw Error(cat("backward of ", node.name, ": gradient for input ", i, " has shape ",
                    minidl::to_string(grad.shape()), ", expected ", minidl::to_string(expected)));
}

// Leaves with hooks, and for each the count of edges into it from the nodes of this pass:
// their gradient is summed and hooked once, after the last of those nodes ran, as
// PyTorch's AccumulateGrad runs once its input is complete. Empty when no leaf has a hook.
std::vector<TensorImpl*> hooked_leaves(const std::vector<Node*>& order) {
  std::vector<TensorImpl*> leaves;
  for (Node* node : order)
    for (const auto& input : node->inputs)
      if (input && !input->grad_fn && input->grad_hooks)
        if (input->grad_hooks->waiting++ == 0) leaves.push_back(input.get());
  return leaves;
}

void finish_leaf(TensorImpl& leaf, const Tensor& grad, bool may_adopt) {
  if (!leaf.grad_hooks) {
    accumulate_into_leaf(leaf, grad, may_adopt);
    return;
  }
  Tensor hooked = run_grad_hooks(*leaf.grad_hooks, grad);
  accumulate_into_leaf(leaf, hooked, may_adopt && hooked.same(grad));
}

// After `node` ran (or had no gradient to pass on): the hooked leaves it fed whose every
// user has now run get their summed gradient.
void release_hooked_leaves(const Node& node) {
  for (const auto& input : node.inputs) {
    if (!input || input->grad_fn || !input->grad_hooks) continue;
    GradHooks& hooks = *input->grad_hooks;
    if (--hooks.waiting > 0 || !hooks.pending.defined()) continue;
    Tensor grad = std::move(hooks.pending);
    hooks.pending = Tensor();
    finish_leaf(*input, grad, true);
  }
}

}  // namespace

void run_backward(const Tensor& root, const Tensor& grad_output, bool retain_graph) {
  if (!root.requires_grad()) throw Error("element 0 of tensors does not require grad and does not have a grad_fn");
  if (grad_output.shape() != root.shape())
    throw Error(cat("backward: grad_output has shape ", minidl::to_string(grad_output.shape()),
                    " but the tensor has shape ", minidl::to_string(root.shape())));
  NoGradGuard no_grad;
  if (root.is_leaf()) {
    finish_leaf(*root.impl(), grad_output, false);
    return;
  }
  // Inputs of finished nodes, dropped only at the end (after clear_pending's): they keep the
  // nodes in `order` alive.
  std::vector<std::shared_ptr<TensorImpl>> finished;
  const std::vector<Node*> order = topological_order(root.grad_fn().get());
  const std::vector<TensorImpl*> leaves = hooked_leaves(order);
  // A backward that throws leaves no gradients pending on the graph for a later pass.
  struct ClearPending {
    const std::vector<Node*>& order;
    const std::vector<TensorImpl*>& leaves;
    ~ClearPending() {
      for (Node* node : order) node->pending_grad = Tensor();
      for (TensorImpl* leaf : leaves) {
        leaf->grad_hooks->pending = Tensor();
        leaf->grad_hooks->waiting = 0;
      }
    }
  } clear_pending{order, leaves};
  root.grad_fn()->pending_grad = grad_output;
  for (Node* node : order) {
    if (node->released)
      throw Error(cat("backward through the graph a second time (at ", node->name,
                      "): its saved values were freed by the first backward(); "
                      "pass retain_graph=true to the first call to backward twice"));
    if (!node->pending_grad.defined()) {
      if (!leaves.empty()) release_hooked_leaves(*node);
      continue;
    }
    Tensor grad = std::move(node->pending_grad);
    node->pending_grad = Tensor();
    if (node->grad_hooks) {  // the output tensor's hooks, then its retain_grad
      grad = run_grad_hooks(*node->grad_hooks, std::move(grad));
      keep_retained_grad(*node->grad_hooks, grad);
    }
    std::vector<Tensor> input_grads;
    try {
      input_grads = node->backward(grad);
    } catch (const SavedTensorModified& e) {  // say which backward needed the changed values
      throw SavedTensorModified(cat(e.what(), " The backward of ", node->name,
                                    "Backward0 needs it: write into a clone() instead, or after backward()."));
    }
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const auto& input = node->inputs[i];
      if (!input || i >= input_grads.size() || !input_grads[i].defined()) continue;
      check_gradient_shape(*node, i, input_grads[i]);
      if (input->grad_fn) accumulate(input->grad_fn->pending_grad, input_grads[i]);
      else if (input->grad_hooks) accumulate(input->grad_hooks->pending, input_grads[i]);
      else accumulate_into_leaf(*input, input_grads[i], true);
    }
    if (!leaves.empty()) release_hooked_leaves(*node);
    if (!retain_graph) {  // free the saved tensors and the intermediate results now
      node->backward = nullptr;
      node->released = true;
      for (auto& input : node->inputs) finished.push_back(std::move(input));
      node->inputs.clear();
    }
  }
}

void Tensor::backward(bool retain_graph) const {
  if (numel() != 1)
    throw Error(cat("grad can be implicitly created only for scalar outputs: backward() on a tensor of shape ",
                    minidl::to_string(shape()), " needs an explicit gradient"));
  run_backward(*this, Tensor::ones(shape()), retain_graph);
}

void Tensor::backward(const Tensor& grad_output, bool retain_graph) const {
  run_backward(*this, grad_output, retain_graph);
}

}  // namespace minidl
