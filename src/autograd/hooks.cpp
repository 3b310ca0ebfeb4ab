// Tensor hooks and retain_grad: where they are kept and how they run. The engine
// (engine.cpp) calls run_grad_hooks where a gradient is complete.
#include <atomic>

#include "autograd/grad_hooks.hpp"
#include "minidl/autograd/grad_mode.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {

uint64_t detail::next_hook_id() {
  static std::atomic<uint64_t> last{0};
  return ++last;
}

namespace {

// A leaf keeps its hooks on itself; a non-leaf on the node that made it.
std::shared_ptr<GradHooks>& hooks_slot(const Tensor& t, const char* what) {
  if (!t.requires_grad())
    throw Error(
        cat("cannot ", what, " on a tensor that doesn't require gradient (shape ", minidl::to_string(t.shape()), ")"));
  std::shared_ptr<GradHooks>& slot = t.is_leaf() ? t.impl()->grad_hooks : t.grad_fn()->grad_hooks;
  if (!slot) slot = std::make_shared<GradHooks>();
  return slot;
}

}  // namespace

Tensor run_grad_hooks(const GradHooks& hooks, Tensor grad) {
  for (const TensorHook& hook : hooks.hooks()) {
    Tensor replaced = hook(grad);
    if (!replaced.defined()) continue;
    if (replaced.shape() != grad.shape())
      throw Error(cat("a hook registered with register_hook returned a gradient of shape ",
                      minidl::to_string(replaced.shape()), ", expected ", minidl::to_string(grad.shape())));
    grad = std::move(replaced);
  }
  return grad;
}

void keep_retained_grad(const GradHooks& hooks, const Tensor& grad) {
  const std::shared_ptr<TensorImpl> target = hooks.retained.lock();
  if (!target) return;
  NoGradGuard no_grad;
  target->grad = target->grad ? add(Tensor(target->grad), grad).impl_ptr() : grad.detach().clone().impl_ptr();
}

RemovableHandle Tensor::register_hook(TensorHook hook) const {
  std::shared_ptr<GradHooks>& slot = hooks_slot(*this, "register a hook");
  const uint64_t id = slot->add(std::move(hook));
  return RemovableHandle(std::weak_ptr<detail::HookRemover>(slot), id);
}

void Tensor::retain_grad() const {
  if (!requires_grad()) throw Error("can't retain_grad on Tensor that has requires_grad=False");
  if (is_leaf()) return;  // a leaf keeps its gradient anyway
  hooks_slot(*this, "retain_grad")->retained = impl_ptr();
}

bool Tensor::retains_grad() const {
  if (!defined() || is_leaf() || !grad_fn()->grad_hooks) return false;
  return grad_fn()->grad_hooks->retained.lock() == impl_ptr();
}

}  // namespace minidl
