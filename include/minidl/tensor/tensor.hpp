#pragma once
// Tensor: float32, contiguous, row-major, any rank. Views (reshape, detach) share storage.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "minidl/autograd/hooks.hpp"
#include "minidl/tensor/generator.hpp"
#include "minidl/tensor/shape.hpp"
#include "minidl/tensor/storage.hpp"

namespace minidl {

struct Node;
struct GradHooks;  // src/autograd/grad_hooks.hpp
class Tensor;

/// Called with a tensor's gradient during backward (grad mode off); returns a replacement
/// of the same shape, or an undefined Tensor to keep the gradient (PyTorch's None).
using TensorHook = std::function<Tensor(const Tensor& grad)>;

/// What a Tensor handle points to. Several handles may share one impl; several impls
/// (views) may share one Storage.
struct TensorImpl {
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;  // first element's index into storage
  Shape shape;
  bool requires_grad = false;
  std::shared_ptr<TensorImpl> grad;       // accumulated by backward() on leaves
  std::shared_ptr<Node> grad_fn;          // the op that made this tensor, if recorded
  std::shared_ptr<GradHooks> grad_hooks;  // a leaf's register_hook()s; a non-leaf's live on its grad_fn
};

class Tensor {
 public:
  Tensor() = default;  // undefined: no storage
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- factories ----
  // Shapes by value: a braced shape, {n, c}, moves in instead of being copied again.
  static Tensor empty(Shape shape);  // uninitialised
  static Tensor zeros(Shape shape);
  static Tensor ones(Shape shape);
  static Tensor full(Shape shape, float value);
  static Tensor scalar(float value);  // rank 0
  /// start, start + step, ... below end (like torch.arange); a step that moves away from
  /// end is an error, as in PyTorch.
  static Tensor arange(float start, float end, float step = 1.0f);
  static Tensor arange(int64_t end) { return arange(0.0f, float(end)); }
  /// Copies values; their count must equal numel(shape).
  static Tensor from_vector(const std::vector<float>& values, const Shape& shape);
  static Tensor from_vector(const std::vector<float>& values);  // 1-D
  /// Uniform in [low, high).
  static Tensor rand(const Shape& shape, Generator& gen, float low = 0.0f, float high = 1.0f);
  static Tensor randn(const Shape& shape, Generator& gen, float mean = 0.0f, float std = 1.0f);
  /// torch.randn(shape): standard normal from the global generator (default_generator()).
  static Tensor randn(const Shape& shape) { return randn(shape, default_generator()); }
  /// Integers in [low, high) stored as float (minidl tensors are float32).
  static Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator& gen);

  // ---- shape and data ----
  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return checked().shape; }
  int64_t dim() const { return int64_t(shape().size()); }
  int64_t size(int64_t d) const;
  int64_t numel() const;
  // Inline: kernels and loops call these often, and a call per row showed in profiles.
  float* data() { return checked().storage->data() + impl_->offset; }
  const float* data() const { return checked().storage->data() + impl_->offset; }
  std::vector<float> to_vector() const;
  /// Element at a full index; negative entries count from the end as in Python (-1 is
  /// the last). Throws naming the index, the dim and its size when out of range.
  float at(const std::vector<int64_t>& index) const;
  /// Writes one element in place (indexed as at()).
  void set(const std::vector<int64_t>& index, float value);
  /// The only element of a one-element tensor.
  float item() const;

  /// x.sum(), x.mean({0}, true): the reductions of minidl/ops/reduce.hpp over `axes`
  /// (empty = all), differentiable.
  Tensor sum(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;
  Tensor mean(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;

  /// A view with a new shape (one -1 is inferred); differentiable.
  Tensor reshape(const Shape& shape) const;
  /// A new tensor with its own copy of the data; differentiable (like torch.clone).
  Tensor clone() const;
  /// Shares storage, records no graph.
  Tensor detach() const;
  // In-place writes, as PyTorch's: each bumps the storage's version, refuses a leaf that
  // requires grad while grad mode is on (init and optimizers write under NoGradGuard),
  // and in grad mode joins the graph: this tensor's old history feeds the write's node.
  /// Copies src's values into this tensor (shapes must match); the gradient goes to src.
  void copy_(const Tensor& src);
  void fill_(float value);
  void zero_() { fill_(0.0f); }
  /// PyTorch's _version: the number of in-place writes to this tensor's storage.
  uint32_t version() const { return checked().storage->version(); }
  /// Marks a write made through data() (torch.autograd.graph.increment_version), so a
  /// backward that saved these values refuses to run on the changed ones.
  void bump_version() { checked().storage->bump_version(); }

  // ---- autograd ----
  bool requires_grad() const;
  Tensor& requires_grad_(bool on = true);
  bool is_leaf() const;
  /// The accumulated gradient (undefined until a backward reaches this leaf).
  Tensor grad() const;
  void set_grad(const Tensor& grad);
  /// Sets grad to undefined, as PyTorch's zero_grad(set_to_none=True).
  void zero_grad();
  const std::shared_ptr<Node>& grad_fn() const;
  /// Backward from a one-element tensor (gradient 1).
  void backward(bool retain_graph = false) const;
  /// Backward with an explicit gradient of this tensor's shape.
  void backward(const Tensor& grad_output, bool retain_graph = false) const;
  /// PyTorch's Tensor.register_hook: `hook` gets this tensor's gradient in every backward
  /// that reaches it, and may return a replacement. Hooks run in registration order, each
  /// seeing the previous one's result; a leaf's run on the gradient summed over the pass,
  /// before it is accumulated into grad(). Throws for a tensor that does not require grad.
  RemovableHandle register_hook(TensorHook hook) const;
  /// A hook that only looks: [](const Tensor& g) { ... } with no return value.
  template <typename F>
  requires std::is_void_v<std::invoke_result_t<F&, const Tensor&>> RemovableHandle register_hook(F hook)
  const {
    return register_hook(TensorHook([hook = std::move(hook)](const Tensor& g) mutable {
      hook(g);
      return Tensor();
    }));
  }
  /// Keeps a non-leaf tensor's gradient in grad() (accumulated over backward passes, after
  /// its hooks); a no-op on a leaf. Throws for a tensor that does not require grad.
  void retain_grad() const;
  bool retains_grad() const;

  // ---- printing ----
  /// PyTorch's style: tensor([[1.0000, 2.0000]]) with the shape when useful.
  std::string to_string() const;

  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool same(const Tensor& other) const { return impl_ == other.impl_; }

 private:
  const TensorImpl& checked() const {
    if (!impl_) throw_undefined();
    return *impl_;
  }
  [[noreturn]] static void throw_undefined();
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& out, const Tensor& t);

}  // namespace minidl
