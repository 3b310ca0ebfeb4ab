#include "minidl/optim/sgd.hpp"

#include <algorithm>

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

// One step's coefficients, float32 as PyTorch's kernels apply their Python-float alphas.
struct Update {
  float lr, momentum, damp, decay;
  bool use_momentum, first, maximize, nesterov;
};

constexpr int64_t kChunk = 1 << 14;  // values per parallel task

// The update of n values. Its coefficients are plain locals here (not reached through a
// closure), so the compiler unswitches the branches and vectorizes the loop.
void update_values(float* w, const float* dw, float* b, int64_t n, Update u) {
  for (int64_t i = 0; i < n; ++i) {
    float d = u.maximize ? -dw[i] : dw[i];
    if (u.decay != 0.0f) d += u.decay * w[i];
    if (u.use_momentum) {
      b[i] = u.first ? d : u.momentum * b[i] + u.damp * d;
      d = u.nesterov ? d + u.momentum * b[i] : b[i];
    }
    w[i] += -u.lr * d;
  }
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
    const Update update{lr, momentum, damp, decay, use_momentum, first, options_.maximize, options_.nesterov};
    const int64_t n = p.numel();
    // Chunks of values, each on its own: the same bits on any number of threads.
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    kernels::parallel_for(chunks, n > kernels::kParallelElements, [&](int64_t c) {
      const int64_t begin = c * kChunk, count = std::min(kChunk, n - begin);
      update_values(w + begin, dw + begin, b ? b + begin : nullptr, count, update);
    });
    p.bump_version();  // a graph that saved p must not run its backward on the new values
  }
}

}  // namespace minidl::optim
