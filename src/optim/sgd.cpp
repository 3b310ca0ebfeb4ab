#include "minidl/optim/sgd.hpp"

#include <cmath>

#include "kernels/parallel_for.hpp"
#include "minidl/autograd/grad_mode.hpp"
#include "minidl/tensor/error.hpp"
#include "state_checks.hpp"

namespace minidl::optim {
namespace {

void check_options(const SGDOptions& o) {
  if (std::isnan(o.lr)) throw UsageError("SGD: lr is required (SGDOptions{.lr = ...}), got none or NaN");
  if (!(o.lr >= 0.0)) throw UsageError(cat("SGD: invalid learning rate: lr=", o.lr, " (expected >= 0)"));
  if (!(o.momentum >= 0.0))
    throw UsageError(cat("SGD: invalid momentum value: momentum=", o.momentum, " (expected >= 0)"));
  if (!(o.weight_decay >= 0.0))
    throw UsageError(cat("SGD: invalid weight_decay value: weight_decay=", o.weight_decay, " (expected >= 0)"));
  if (o.nesterov && (o.momentum <= 0.0 || o.dampening != 0.0))
    throw UsageError(cat("SGD: nesterov momentum requires a momentum > 0 and zero dampening, got momentum=", o.momentum,
                         ", dampening=", o.dampening));
}

// One step's coefficients, float32 as PyTorch's kernels apply their Python-float alphas.
struct SgdUpdate {
  float lr, momentum, damp, decay;
  bool use_momentum, first, maximize, nesterov;
};

// The update of n values. Its coefficients are plain locals here (not reached through a
// closure), so the compiler unswitches the branches and vectorizes the loop.
void update_values(float* w, const float* dw, float* b, int64_t n, SgdUpdate u) {
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

OptimizerState SGD::state_dict() const {
  OptimizerState out;
  out.state.resize(params().size());
  for (size_t i = 0; i < params().size(); ++i)
    if (momentum_buffers_[i].defined()) out.state[i]["momentum_buffer"] = momentum_buffers_[i];
  const SGDOptions& o = options_;
  out.param_group = {{"lr", o.lr},
                     {"momentum", o.momentum},
                     {"dampening", o.dampening},
                     {"weight_decay", o.weight_decay},
                     {"nesterov", o.nesterov},
                     {"maximize", o.maximize}};
  add_initial_lr(out);
  return out;
}

void SGD::load_state_dict(const OptimizerState& state) {
  const char* who = "SGD";
  detail::check_parameter_count(state, params().size(), who);
  detail::check_option_names(state, who, {"lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"});
  SGDOptions o = options_;
  o.lr = detail::number_option(state, "lr", o.lr, who);
  o.momentum = detail::number_option(state, "momentum", o.momentum, who);
  o.dampening = detail::number_option(state, "dampening", o.dampening, who);
  o.weight_decay = detail::number_option(state, "weight_decay", o.weight_decay, who);
  o.nesterov = detail::flag_option(state, "nesterov", o.nesterov, who);
  o.maximize = detail::flag_option(state, "maximize", o.maximize, who);
  check_options(o);
  std::vector<Tensor> buffers(params().size());
  for (size_t i = 0; i < params().size(); ++i) {
    const auto& entries = detail::checked_entries(state, i, params()[i], who, {}, {"momentum_buffer"});
    if (auto found = entries.find("momentum_buffer"); found != entries.end()) buffers[i] = found->second.clone();
  }
  const std::optional<double> initial_lr = loaded_initial_lr(state, who);
  options_ = o;  // nothing changes unless every check passed
  set_initial_lr(initial_lr);
  momentum_buffers_ = std::move(buffers);
}

const Tensor& SGD::momentum_buffer(size_t i) const {
  if (i >= momentum_buffers_.size())
    throw Error(
        cat("SGD::momentum_buffer: index ", i, " is out of range for ", momentum_buffers_.size(), " parameters"));
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
    const SgdUpdate update{lr, momentum, damp, decay, use_momentum, first, options_.maximize, options_.nesterov};
    kernels::parallel_chunks(p.numel(), kernels::kValuesPerTask, [&](int64_t begin, int64_t count) {
      update_values(w + begin, dw + begin, b ? b + begin : nullptr, count, update);
    });
    p.bump_version();  // a graph that saved p must not run its backward on the new values
  }
}

}  // namespace minidl::optim
