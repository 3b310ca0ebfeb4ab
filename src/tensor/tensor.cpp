#include "minidl/tensor/tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <utility>

#include "autograd/grad_hooks.hpp"
#include "minidl/autograd/grad_mode.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/tensor/error.hpp"
#include "tensor/small_blocks.hpp"

namespace minidl {
// Tensor headers and storage headers come from the per-thread free lists (small_blocks.hpp).
using detail::make_pooled;

// ---- factories ----

Tensor Tensor::empty(Shape shape) {
  for (int64_t extent : shape)
    if (extent < 0) throw Error(cat("negative dimension in shape ", minidl::to_string(shape)));
  const int64_t count = minidl::numel(shape);
  auto impl = make_pooled<TensorImpl>();
  try {
    if (uint64_t(count) > std::numeric_limits<size_t>::max() / sizeof(float) / 2) throw std::bad_alloc();
    impl->storage = make_pooled<Storage>(size_t(count));
  } catch (const std::bad_alloc&) {
    const double bytes = double(count) * double(sizeof(float));
    throw Error(cat("cannot allocate a tensor of shape ", minidl::to_string(shape), ": ", count, " floats (", bytes,
                    " bytes, ", bytes / double(1 << 30), " GiB) is more memory than this machine gives"));
  }
  impl->shape = std::move(shape);
  return Tensor(std::move(impl));
}

Tensor Tensor::full(Shape shape, float value) {
  Tensor t = empty(std::move(shape));
  t.fill_(value);
  return t;
}

Tensor Tensor::zeros(Shape shape) { return full(std::move(shape), 0.0f); }
Tensor Tensor::ones(Shape shape) { return full(std::move(shape), 1.0f); }
Tensor Tensor::scalar(float value) { return full({}, value); }

Tensor Tensor::arange(float start, float end, float step) {
  if (step == 0.0f) throw Error("arange: step must be nonzero, got 0");
  if ((step > 0.0f && end < start) || (step < 0.0f && end > start))  // PyTorch's message
    throw Error(cat("arange: upper bound and larger bound inconsistent with step sign (start ", start, ", end ", end,
                    ", step ", step, ")"));
  double span = (double(end) - double(start)) / double(step);
  auto count = int64_t(std::max(0.0, std::ceil(span)));
  Tensor t = empty({count});
  for (int64_t i = 0; i < count; ++i) t.data()[i] = float(double(start) + double(i) * double(step));
  return t;
}

Tensor Tensor::from_vector(const std::vector<float>& values, const Shape& shape) {
  if (int64_t(values.size()) != minidl::numel(shape))
    throw Error(cat("from_vector: shape ", minidl::to_string(shape), " needs ", minidl::numel(shape), " values, got ",
                    values.size()));
  Tensor t = empty(shape);
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

Tensor Tensor::from_vector(const std::vector<float>& values) { return from_vector(values, {int64_t(values.size())}); }

Tensor Tensor::rand(const Shape& shape, Generator& gen, float low, float high) {
  Tensor t = empty(shape);
  for (float& v : std::span(t.data(), size_t(t.numel()))) v = gen.uniform(low, high);
  return t;
}

Tensor Tensor::randn(const Shape& shape, Generator& gen, float mean, float std) {
  Tensor t = empty(shape);
  for (float& v : std::span(t.data(), size_t(t.numel()))) v = mean + std * gen.normal();
  return t;
}

Tensor Tensor::randint(int64_t low, int64_t high, const Shape& shape, Generator& gen) {
  if (high <= low) throw Error(cat("randint: expected low < high, got low ", low, ", high ", high));
  Tensor t = empty(shape);
  for (float& v : std::span(t.data(), size_t(t.numel()))) v = float(low + int64_t(gen.below(uint64_t(high - low))));
  return t;
}

// ---- shape and data ----

void Tensor::throw_undefined() { throw Error("operation on an undefined tensor (it holds no data)"); }

int64_t Tensor::size(int64_t d) const { return shape()[size_t(normalize_dim(d, dim()))]; }

int64_t Tensor::numel() const { return minidl::numel(shape()); }

std::vector<float> Tensor::to_vector() const { return {data(), data() + numel()}; }

namespace {
int64_t flat_index(const Shape& shape, const std::vector<int64_t>& index) {
  if (index.size() != shape.size())
    throw Error(cat("index ", minidl::to_string(index), " has ", index.size(), " entries but the tensor of shape ",
                    minidl::to_string(shape), " has ", shape.size(), " dimensions"));
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t i = index[d] < 0 ? index[d] + shape[d] : index[d];  // -1 is the last, as in Python
    if (i < 0 || i >= shape[d])
      throw Error(cat("index ", index[d], " is out of bounds for dimension ", d, " with size ", shape[d], " (shape ",
                      minidl::to_string(shape), ")"));
    flat = flat * shape[d] + i;
  }
  return flat;
}

// PyTorch's rule: a write into a leaf that requires grad would be invisible to its gradient.
// A write into a view in the graph would reach the view's history but not its base's (that
// is PyTorch's CopySlices, which minidl lacks): refused rather than a silently wrong gradient.
void check_writable(const Tensor& t) {
  if (!t.requires_grad() || !grad_enabled()) return;
  if (t.is_leaf()) throw Error("a leaf Variable that requires grad is being used in an in-place operation.");
  if (t.grad_fn()->name == "View")
    throw Error(
        "in-place write into a view (from reshape) of a tensor that requires grad: minidl cannot carry it "
        "into the base tensor's gradient; write into the base, or into a clone() of the view");
}

// Whether an in-place write to t (from src, if any) joins the graph.
bool write_joins_graph(const Tensor& t, const Tensor& src) {
  return (t.requires_grad() || (src.defined() && src.requires_grad())) && grad_enabled();
}

// After such a write, t's history before it becomes an input of a node for the write
// (PyTorch's rebase_history), so gradients reach what the new values came from and the old
// history gets what is left. `backward` maps t's gradient to gradients of {t before, src}.
void rebase_history(const Tensor& t, const char* op, const Tensor& src, BackwardFn backward) {
  Tensor before(make_pooled<TensorImpl>(*t.impl()));  // same storage and grad_fn: the old history
  const bool retained = t.retains_grad();
  record(t, op, {before, src}, std::move(backward));
  // Hooks stay with the old value; retain_grad follows the tensor (PyTorch 2.x).
  if (retained) {
    before.grad_fn()->grad_hooks->retained.reset();
    t.retain_grad();
  }
}
}  // namespace

float Tensor::at(const std::vector<int64_t>& index) const { return data()[flat_index(shape(), index)]; }

void Tensor::set(const std::vector<int64_t>& index, float value) {
  const int64_t flat = flat_index(shape(), index);
  check_writable(*this);
  data()[flat] = value;
  bump_version();
  if (!write_joins_graph(*this, Tensor())) return;
  rebase_history(*this, "CopySlices", Tensor(), [flat](const Tensor& g) -> std::vector<Tensor> {
    Tensor rest = g.detach().clone();  // the overwritten element gets no gradient
    rest.data()[flat] = 0.0f;
    return {rest, Tensor()};
  });
}

float Tensor::item() const {
  if (numel() != 1)
    throw Error(cat("item(): expected a tensor with one element, got shape ", minidl::to_string(shape())));
  return data()[0];
}

Tensor Tensor::detach() const {
  auto impl = make_pooled<TensorImpl>();
  impl->storage = checked().storage;
  impl->offset = impl_->offset;
  impl->shape = impl_->shape;
  return Tensor(std::move(impl));
}

Tensor Tensor::reshape(const Shape& new_shape) const {
  Shape shape = new_shape;
  int64_t known = 1;
  int64_t inferred = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      if (inferred >= 0) throw Error(cat("reshape: only one dimension can be -1, got ", minidl::to_string(new_shape)));
      inferred = int64_t(d);
    } else if (shape[d] < 0) {
      throw Error(cat("reshape: invalid shape ", minidl::to_string(new_shape)));
    } else {
      known *= shape[d];
    }
  }
  if (inferred >= 0 && known > 0 && numel() % known == 0) shape[size_t(inferred)] = numel() / known;
  if (minidl::numel(shape) != numel() || (inferred >= 0 && known == 0))
    throw Error(cat("reshape: shape ", minidl::to_string(new_shape), " is invalid for input of shape ",
                    minidl::to_string(this->shape()), " (", numel(), " elements)"));
  Tensor view = detach();
  view.impl_->shape = shape;
  Shape source_shape = this->shape();
  return record(view, "View", {*this},
                [source_shape](const Tensor& g) -> std::vector<Tensor> { return {g.reshape(source_shape)}; });
}

Tensor Tensor::clone() const {
  Tensor copy = empty(shape());
  std::memcpy(copy.data(), data(), size_t(numel()) * sizeof(float));
  return record(copy, "Clone", {*this}, [](const Tensor& g) -> std::vector<Tensor> { return {g}; });
}

void Tensor::copy_(const Tensor& src) {
  if (src.shape() != shape())
    throw Error(cat("copy_: expected a source of shape ", minidl::to_string(shape()), ", got ",
                    minidl::to_string(src.shape())));
  check_writable(*this);
  std::memmove(data(), src.data(), size_t(numel()) * sizeof(float));
  bump_version();
  if (!write_joins_graph(*this, src)) return;
  rebase_history(*this, "Copy", src, [shape = shape()](const Tensor& g) -> std::vector<Tensor> {
    return {Tensor::zeros(shape), g};
  });
}

void Tensor::fill_(float value) {
  check_writable(*this);
  std::fill_n(data(), numel(), value);
  bump_version();
  // The old history gets zeros, not nothing: its backward still runs and checks what it saved.
  if (!write_joins_graph(*this, Tensor())) return;
  rebase_history(*this, "Fill", Tensor(), [shape = shape()](const Tensor&) -> std::vector<Tensor> {
    return {Tensor::zeros(shape), Tensor()};
  });
}

// ---- autograd ----

bool Tensor::requires_grad() const { return checked().requires_grad; }

Tensor& Tensor::requires_grad_(bool on) {
  if (!is_leaf() && !on) throw Error("requires_grad_(false) on a non-leaf tensor: use detach() instead");
  impl_->requires_grad = on;
  return *this;
}

bool Tensor::is_leaf() const { return checked().grad_fn == nullptr; }

Tensor Tensor::grad() const { return Tensor(checked().grad); }

void Tensor::set_grad(const Tensor& grad) {
  if (grad.defined() && grad.shape() != shape())
    throw Error(cat("set_grad: expected a gradient of shape ", minidl::to_string(shape()), ", got ",
                    minidl::to_string(grad.shape())));
  impl_->grad = grad.impl_ptr();
}

void Tensor::zero_grad() {
  checked();
  impl_->grad.reset();
}

const std::shared_ptr<Node>& Tensor::grad_fn() const { return checked().grad_fn; }

}  // namespace minidl
