#include "minidl/ops/activation.hpp"

#include <cmath>

#include "kernels/activation.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {

Tensor gelu(const Tensor& x, const std::string& approximate) {
  if (approximate != "none" && approximate != "tanh")
    throw Error(cat("approximate argument must be either none or tanh., got \"", approximate, "\""));
  const bool tanh_approximation = approximate == "tanh";
  Tensor out = Tensor::empty(x.shape());
  kernels::gelu_forward(out.data(), x.data(), x.numel(), tanh_approximation);
  if (!needs_grad({x})) return out;
  const SavedTensor saved(x);
  return record(out, "Gelu", {x}, [saved, tanh_approximation](const Tensor& g) -> std::vector<Tensor> {
    const Tensor& v = saved.unpack();
    Tensor dx = Tensor::empty(v.shape());  // same shape as x
    kernels::gelu_backward(dx.data(), g.data(), v.data(), v.numel(), tanh_approximation);
    return {dx};
  });
}

Tensor silu(const Tensor& x) {
  Tensor out = Tensor::empty(x.shape());
  kernels::silu_forward(out.data(), x.data(), x.numel());
  if (!needs_grad({x})) return out;
  const SavedTensor saved(x);
  return record(out, "Silu", {x}, [saved](const Tensor& g) -> std::vector<Tensor> {
    const Tensor& v = saved.unpack();
    Tensor dx = Tensor::empty(v.shape());
    kernels::silu_backward(dx.data(), g.data(), v.data(), v.numel());
    return {dx};
  });
}

void check_dropout_probability(double p) {
  if (!(p >= 0.0 && p <= 1.0)) throw Error(cat("dropout probability has to be between 0 and 1, but got ", p));
}

Tensor dropout(const Tensor& x, double p, bool training, Generator& gen) {
  check_dropout_probability(p);
  if (!training || p == 0.0 || x.numel() == 0) return x;
  // The mask holds 0 or 1 / (1 - p), as PyTorch's bernoulli_(1 - p).div_(1 - p); the product
  // records the gradient g * mask. p = 1 keeps nothing: a mask of zeros, no division by 0.
  Tensor mask = Tensor::zeros(x.shape());
  if (p < 1.0) {
    const float keep = float(1.0 - p);
    const float scale = 1.0f / keep;
    float* m = mask.data();
    for (int64_t i = 0; i < mask.numel(); ++i) m[i] = gen.uniform() < keep ? scale : 0.0f;
  }
  return mul(x, mask);
}

}  // namespace minidl
