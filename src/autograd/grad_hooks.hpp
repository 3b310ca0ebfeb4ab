#pragma once
// The hooks of one tensor's gradient: a leaf's on its TensorImpl, a non-leaf's on the node
// that made it (so they see the gradient of the tensor's value at the time they were
// registered, as PyTorch's hooks do across an in-place write).
#include <memory>

#include "minidl/autograd/hooks.hpp"
#include "minidl/tensor/tensor.hpp"

namespace minidl {

struct GradHooks : HookList<TensorHook> {
  /// retain_grad() on a non-leaf: the tensor whose grad() keeps the gradient (weak: the
  /// graph must not keep the tensor alive).
  std::weak_ptr<TensorImpl> retained;
  /// A leaf's gradient summed over one backward pass, and the count of nodes feeding it
  /// that have not run yet: its hooks run once, when that count reaches zero.
  Tensor pending;
  int64_t waiting = 0;
};

/// Runs the hooks in order on `grad` (each may replace it, with the same shape) and
/// returns the result; throws naming both shapes for a hook that changes the shape.
Tensor run_grad_hooks(const GradHooks& hooks, Tensor grad);
/// A retained non-leaf's grad() += grad (a clone the first time), as PyTorch's retain_grad.
void keep_retained_grad(const GradHooks& hooks, const Tensor& grad);

}  // namespace minidl
