#pragma once
// A recorded op in the define-by-run graph: its inputs and a closure that maps the
// gradient of its output to gradients of its inputs.
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// What a node runs in the backward: from the gradient of its output to the gradients of
/// its inputs, one per input in order (an undefined Tensor: none for that input).
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output)>;

struct Node {
  std::string name;  // the op, for error messages and printing ("Mul", "Mm", ...)
  /// The inputs that need a gradient; nullptr where an input does not. Emptied, like
  /// `backward`, by a backward() that does not retain the graph.
  std::vector<std::shared_ptr<TensorImpl>> inputs;
  /// Holds what the backward needs; cleared after backward unless retain_graph.
  BackwardFn backward;
  bool released = false;
  /// The backward pass's scratch, empty between passes: the sum of the gradients that have
  /// reached this node's output so far, and the pass that last visited the node.
  Tensor pending_grad;
  uint64_t visited_by = 0;
  /// The output tensor's register_hook()s and retain_grad(), run on the summed gradient
  /// before this node's backward (PyTorch's tensor pre-hooks on grad_fn); null when none.
  std::shared_ptr<GradHooks> grad_hooks;

  /// Frees the graph above this node iteratively: a chain of thousands of ops must not
  /// overflow the stack through nested shared_ptr destructors.
  ~Node();
};

/// Wraps an op's freshly computed result: when grad mode is on and any input requires
/// grad, records a Node so backward() can reach the inputs. The closure must never
/// capture `out` itself (that would be a reference cycle): capture out.detach().
Tensor record(Tensor out, const char* name, std::span<const Tensor> inputs, BackwardFn backward);
/// The usual call, record(out, "Op", {x, w}, ...): the braced inputs need no vector.
inline Tensor record(Tensor out, const char* name, std::initializer_list<Tensor> inputs, BackwardFn backward) {
  return record(std::move(out), name, std::span<const Tensor>(inputs.begin(), inputs.size()), std::move(backward));
}

/// True when any input requires grad and grad mode is on: ops skip saving state otherwise.
bool needs_grad(std::span<const Tensor> inputs);
inline bool needs_grad(std::initializer_list<Tensor> inputs) {
  return needs_grad(std::span<const Tensor>(inputs.begin(), inputs.size()));
}

}  // namespace minidl
