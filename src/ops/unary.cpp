#include "minidl/ops/unary.hpp"

#include <cmath>

#include "kernels/broadcast.hpp"
#include "kernels/parallel_for.hpp"
#include "kernels/tanh.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/ops/binary.hpp"

namespace minidl {
namespace {

template <typename F>
Tensor map(const Tensor& x, F f) {
  Tensor out = Tensor::empty(x.shape());
  const float* in = x.data();
  float* o = out.data();
  const int64_t n = x.numel();
  kernels::parallel_for(n, kernels::kParallelElements, [&](int64_t i) { o[i] = f(in[i]); });
  return out;
}

// out[i] = f(a[i], b[i]) for same-shaped a and b: the shape of most backwards here.
template <typename F>
Tensor zip(const Tensor& a, const Tensor& b, F f) {
  Tensor out = Tensor::empty(a.shape());
  const float* pa = a.data();
  const float* pb = b.data();
  float* o = out.data();
  const int64_t n = a.numel();
  kernels::parallel_for(n, kernels::kParallelElements, [&](int64_t i) { o[i] = f(pa[i], pb[i]); });
  return out;
}

// Records an op whose gradient is g * f(saved) elementwise, `saved` being x or the output.
template <typename F>
Tensor with_local_grad(Tensor out, const char* name, const Tensor& x, const Tensor& saved, F dlocal) {
  if (!needs_grad({x})) return out;
  const SavedTensor kept = saved.same(out) ? SavedTensor::output(out, name) : SavedTensor(saved);
  return record(out, name, {x}, [kept, dlocal](const Tensor& g) -> std::vector<Tensor> {
    return {zip(g, kept.unpack(), [dlocal](float gi, float si) { return gi * dlocal(si); })};
  });
}

}  // namespace

Tensor neg(const Tensor& x) {
  Tensor out = map(x, [](float v) { return -v; });
  return record(out, "Neg", {x}, [](const Tensor& g) -> std::vector<Tensor> { return {neg(g)}; });
}

Tensor exp(const Tensor& x) {
  Tensor out = map(x, [](float v) { return std::exp(v); });
  return with_local_grad(out, "Exp", x, out, [](float y) { return y; });
}

Tensor log(const Tensor& x) {
  Tensor out = map(x, [](float v) { return std::log(v); });
  return with_local_grad(out, "Log", x, x, [](float v) { return 1.0f / v; });
}

Tensor sqrt(const Tensor& x) {
  Tensor out = map(x, [](float v) { return std::sqrt(v); });
  return with_local_grad(out, "Sqrt", x, out, [](float y) { return 0.5f / y; });
}

Tensor rsqrt(const Tensor& x) {
  Tensor out = map(x, [](float v) { return 1.0f / std::sqrt(v); });
  // d/dx x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3
  return with_local_grad(out, "Rsqrt", x, out, [](float y) { return -0.5f * y * y * y; });
}

Tensor pow(const Tensor& x, float exponent) {
  Tensor out = map(x, [exponent](float v) { return std::pow(v, exponent); });
  return with_local_grad(out, "Pow", x, x, [exponent](float v) {
    return exponent == 0.0f ? 0.0f : exponent * std::pow(v, exponent - 1.0f);
  });
}

Tensor tanh(const Tensor& x) {
  Tensor out = Tensor::empty(x.shape());
  kernels::tanh_forward(out.data(), x.data(), x.numel());
  return with_local_grad(out, "Tanh", x, out, [](float y) { return 1.0f - y * y; });
}

Tensor relu(const Tensor& x) {
  Tensor out = map(x, [](float v) { return v > 0.0f ? v : 0.0f; });
  return with_local_grad(out, "Relu", x, out, [](float y) { return y > 0.0f ? 1.0f : 0.0f; });
}

Tensor sigmoid(const Tensor& x) {
  Tensor out = map(x, [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
  return with_local_grad(out, "Sigmoid", x, out, [](float y) { return y * (1.0f - y); });
}

}  // namespace minidl
