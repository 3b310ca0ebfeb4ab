#include "minidl/ops/binary.hpp"

#include "kernels/broadcast.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/ops/unary.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {
namespace {

Shape checked_broadcast(const char* op, const Tensor& a, const Tensor& b) {
  try {
    return broadcast_shapes(a.shape(), b.shape());
  } catch (const Error&) {
    throw Error(
        cat(op, ": shapes ", to_string(a.shape()), " and ", to_string(b.shape()), " cannot be broadcast together"));
  }
}

template <typename F>
Tensor elementwise(const char* op, const Tensor& a, const Tensor& b, F f) {
  Tensor out = Tensor::empty(checked_broadcast(op, a, b));
  kernels::broadcast_binary(a.data(), a.shape(), b.data(), b.shape(), out.data(), out.shape(), f);
  return out;
}

}  // namespace

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  // Align ranks: leading dims that broadcasting added are summed away too.
  const Shape& from = grad.shape();
  const auto fail = [&] {
    return Error(
        cat("sum_to: shape ", to_string(shape), " does not broadcast to the gradient's shape ", to_string(from)));
  };
  if (shape.size() > from.size()) throw fail();
  Shape kept(from.size(), 1);
  const size_t lead = from.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1 && shape[d] != from[lead + d]) throw fail();
    kept[lead + d] = shape[d];
  }
  Tensor out = Tensor::empty(shape);
  kernels::sum_to_shape(grad.data(), grad.shape(), out.data(), kept);
  return out;
}

Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = elementwise("add", a, b, [](float x, float y) { return x + y; });
  return record(out, "Add", {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& g) -> std::vector<Tensor> {
    return {sum_to(g, sa), sum_to(g, sb)};
  });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor out = elementwise("sub", a, b, [](float x, float y) { return x - y; });
  return record(out, "Sub", {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& g) -> std::vector<Tensor> {
    return {sum_to(g, sa), neg(sum_to(g, sb))};
  });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = elementwise("mul", a, b, [](float x, float y) { return x * y; });
  const bool need_a = needs_grad({a}), need_b = needs_grad({b});
  // Each side's gradient needs the other side's values.
  SavedTensor saved_a = need_b ? SavedTensor(a) : SavedTensor();
  SavedTensor saved_b = need_a ? SavedTensor(b) : SavedTensor();
  return record(out, "Mul", {a, b}, [saved_a, saved_b, sa = a.shape(), sb = b.shape()](const Tensor& g) {
    return std::vector<Tensor>{saved_b.defined() ? sum_to(mul(g, saved_b.unpack()), sa) : Tensor(),
                               saved_a.defined() ? sum_to(mul(g, saved_a.unpack()), sb) : Tensor()};
  });
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = elementwise("div", a, b, [](float x, float y) { return x / y; });
  const bool need_a = needs_grad({a});
  SavedTensor saved_out = needs_grad({b}) ? SavedTensor::output(out, "Div") : SavedTensor();
  SavedTensor saved_b = needs_grad({a, b}) ? SavedTensor(b) : SavedTensor();
  return record(out, "Div", {a, b}, [need_a, saved_out, saved_b, sa = a.shape(), sb = b.shape()](const Tensor& g) {
    Tensor g_over_b = div(g, saved_b.unpack());
    Tensor ga = need_a ? sum_to(g_over_b, sa) : Tensor();
    // d(a/b)/db = -a / b^2 = -(g / b) (a / b)
    Tensor gb = saved_out.defined() ? sum_to(neg(mul(g_over_b, saved_out.unpack())), sb) : Tensor();
    return std::vector<Tensor>{ga, gb};
  });
}

}  // namespace minidl
