#include "minidl/optim/sgd.hpp"

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/kernels/broadcast.hpp"
#include "minidl/kernels/parallel_for.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::optim {
namespace {

void check_options(const SGDOptions& o) {
  if (!(o.lr >= 0.0)) throw UsageError(cat("SGD: invalid learning rate: lr=", o.lr, " (expected >= 0)"));
  if (!(o.momentum >= 0.0)) throw UsageError(cat("SGD: invalid momentum value: momentum=", o.momentum, " (expected >= 0)"));
  if (!(o.weight_decay >= 0.0))
    throw UsageError(cat("SGD: invalid weight_decay value: weight_decay=", o.weight_decay, " (expected >= 0)"));
  if (o.nesterov && (o.momentum <= 0.0 || o.dampening != 0.0))
    throw UsageError(cat("SGD: nesterov momentum requires a momentum > 0 and zero dampening, got momentum=",
                         o.momentum, ", dampening=", o.dampening));
}

}  // namespace

SGD::SGD(std::vector<Tensor> params, SGDOptions options) : Optimizer(std::move(params)), options_(options) {
  check_options(options_);
  momentum_buffers_.resize(this->params().size());
}

void SGD::set_lr(double lr) {
  SGDOptions changed = options_;
  changed.lr = lr;
  check_options(changed);
  options_ = changed;
}

const Tensor& SGD::momentum_buffer(size_t i) const {
  if (i >= momentum_buffers_.size())
    throw Error(cat("SGD::momentum_buffer: index ", i, " is out of range for ", momentum_buffers_.size(), " parameters"));
  return momentum_buffers_[i];
}

void SGD::step() {
  NoGradGuard no_grad;
  // float32 coefficients, as PyTorch's kernels apply their Python-float alphas.
  const float lr = float(options_.lr), momentum = float(options_.momentum);
  const float damp = float(1.0 - options_.dampening), decay = float(options_.weight_decay);
  const bool use_momentum = options_.momentum != 0.0;
  for (size_t k = 0; k < params().size(); ++k) {
    Tensor p = params()[k];
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    const bool first = use_momentum && !momentum_buffers_[k].defined();
    if (first) momentum_buffers_[k] = Tensor::empty(p.shape());
    float* w = p.data();
    const float* dw = g.data();
    float* b = use_momentum ? momentum_buffers_[k].data() : nullptr;
    const bool maximize = options_.maximize, nesterov = options_.nesterov;
    const int64_t n = p.numel();
    // Each value on its own: the same bits on any number of threads.
    kernels::parallel_for(n, n > kernels::kParallelElements, [&](int64_t i) {
      float d = maximize ? -dw[i] : dw[i];
      if (decay != 0.0f) d += decay * w[i];
      if (use_momentum) {
        b[i] = first ? d : momentum * b[i] + damp * d;
        d = nesterov ? d + momentum * b[i] : b[i];
      }
      w[i] += -lr * d;
    });
  }
}

}  // namespace minidl::optim
