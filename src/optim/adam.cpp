#include "minidl/optim/adam.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/parallel_for.hpp"
#include "minidl/autograd/grad_mode.hpp"
#include "minidl/tensor/error.hpp"
#include "state_checks.hpp"

namespace minidl::optim {
namespace {

// One step's coefficients, float32 as PyTorch's kernels apply its Python-float scalars; the
// bias corrections are computed in double, as Python does, and rounded once.
struct AdamUpdate {
  float one_minus_beta1, beta2, one_minus_beta2;
  float decay;          // Adam's L2 term (0 for AdamW)
  float shrink;         // AdamW's 1 - lr weight_decay (1 for Adam)
  float neg_step_size;  // -lr / (1 - beta1^t)
  float bias_correction2_sqrt, eps;
  bool amsgrad, maximize;
};

// PyTorch 2.x's first moment, exp_avg.lerp_(grad, 1 - beta1), with ATen's lerp (1.13 wrote
// m * beta1 + (1 - beta1) g: the same value up to rounding).
// Both forms are computed and one picked, so the loop below has no branch and vectorizes.
inline float lerp(float start, float end, float weight) {
  const float from_start = start + weight * (end - start), from_end = end - (end - start) * (1.0f - weight);
  return std::fabs(weight) < 0.5f ? from_start : from_end;
}

// The update of n values, in PyTorch 2.x's order of operations (_single_tensor_adam). No
// branch inside (a product by 1 or -1 is exact, the L2 term is picked), so the loop
// vectorizes: 8% of charlm's step when it did not (docs/benchmarks.md, "Fast paths").
template <bool kAmsgrad>
void update_values(float* w, const float* dw, float* m, float* v, float* v_max, int64_t n, const AdamUpdate& u) {
  const float sign = u.maximize ? -1.0f : 1.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float shrunk = w[i] * u.shrink, plain = dw[i] * sign, decayed = plain + u.decay * shrunk;
    const float g = u.decay != 0.0f ? decayed : plain;
    m[i] = lerp(m[i], g, u.one_minus_beta1);
    v[i] = v[i] * u.beta2 + u.one_minus_beta2 * g * g;
    float second = v[i];
    if constexpr (kAmsgrad) second = v_max[i] = std::max(v_max[i], v[i]);
    const float denom = std::sqrt(second) / u.bias_correction2_sqrt + u.eps;
    w[i] = shrunk + u.neg_step_size * m[i] / denom;
  }
}

}  // namespace

Adam::Adam(std::vector<Tensor> params, AdamOptions options) : Adam(std::move(params), options, false) {}

Adam::Adam(std::vector<Tensor> params, AdamOptions options, bool decoupled_decay)
    : Optimizer(std::move(params)), options_(options), decoupled_decay_(decoupled_decay) {
  check(options_);
  moments_.resize(this->params().size());
}

void Adam::check(const AdamOptions& o) const {
  if (!(o.lr >= 0.0)) throw UsageError(cat(name(), ": invalid learning rate: lr=", o.lr, " (expected >= 0)"));
  if (!(o.eps >= 0.0)) throw UsageError(cat(name(), ": invalid epsilon value: eps=", o.eps, " (expected >= 0)"));
  if (!(o.beta1 >= 0.0 && o.beta1 < 1.0))
    throw UsageError(cat(name(), ": invalid beta parameter at index 0: beta1=", o.beta1, " (expected in [0, 1))"));
  if (!(o.beta2 >= 0.0 && o.beta2 < 1.0))
    throw UsageError(cat(name(), ": invalid beta parameter at index 1: beta2=", o.beta2, " (expected in [0, 1))"));
  if (!(o.weight_decay >= 0.0))
    throw UsageError(cat(name(), ": invalid weight_decay value: weight_decay=", o.weight_decay, " (expected >= 0)"));
}

void Adam::set_lr(double lr) {
  AdamOptions changed = options_;
  changed.lr = lr;
  check(changed);
  options_ = changed;
}

void Adam::step() {
  NoGradGuard no_grad;
  const AdamOptions& o = options_;
  for (size_t k = 0; k < params().size(); ++k) {
    Tensor p = params()[k];
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    Moments& state = moments_[k];
    if (!state.exp_avg.defined()) {
      state.exp_avg = Tensor::zeros(p.shape());
      state.exp_avg_sq = Tensor::zeros(p.shape());
    }
    if (o.amsgrad && !state.max_exp_avg_sq.defined()) state.max_exp_avg_sq = Tensor::zeros(p.shape());
    const double t = double(++state.step);
    const double bias_correction1 = 1.0 - std::pow(o.beta1, t), bias_correction2 = 1.0 - std::pow(o.beta2, t);
    const AdamUpdate u{float(1.0 - o.beta1),
                       float(o.beta2),
                       float(1.0 - o.beta2),
                       decoupled_decay_ ? 0.0f : float(o.weight_decay),
                       decoupled_decay_ ? float(1.0 - o.lr * o.weight_decay) : 1.0f,
                       float(-(o.lr / bias_correction1)),
                       float(std::sqrt(bias_correction2)),
                       float(o.eps),
                       o.amsgrad,
                       o.maximize};
    float* w = p.data();
    const float* dw = g.data();
    float* m = state.exp_avg.data();
    float* v = state.exp_avg_sq.data();
    float* v_max = o.amsgrad ? state.max_exp_avg_sq.data() : nullptr;
    kernels::parallel_chunks(p.numel(), kernels::kValuesPerTask, [&](int64_t begin, int64_t count) {
      if (v_max) update_values<true>(w + begin, dw + begin, m + begin, v + begin, v_max + begin, count, u);
      else update_values<false>(w + begin, dw + begin, m + begin, v + begin, nullptr, count, u);
    });
    p.bump_version();  // a graph that saved p must not run its backward on the new values
  }
}

OptimizerState Adam::state_dict() const {
  OptimizerState out;
  out.state.resize(params().size());
  for (size_t i = 0; i < params().size(); ++i) {
    const Moments& s = moments_[i];
    if (!s.exp_avg.defined()) continue;
    out.state[i] = {{"step", Tensor::scalar(float(s.step))}, {"exp_avg", s.exp_avg}, {"exp_avg_sq", s.exp_avg_sq}};
    if (s.max_exp_avg_sq.defined()) out.state[i]["max_exp_avg_sq"] = s.max_exp_avg_sq;
  }
  const AdamOptions& o = options_;
  out.param_group = {{"lr", o.lr},           {"betas", std::vector<double>{o.beta1, o.beta2}},
                     {"eps", o.eps},         {"weight_decay", o.weight_decay},
                     {"amsgrad", o.amsgrad}, {"maximize", o.maximize}};
  add_initial_lr(out);
  return out;
}

void Adam::load_state_dict(const OptimizerState& state) {
  const char* who = name();
  detail::check_parameter_count(state, params().size(), who);
  detail::check_option_names(state, who, {"lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"});
  AdamOptions o = options_;
  o.lr = detail::number_option(state, "lr", o.lr, who);
  const std::vector<double> betas = detail::tuple_option(state, "betas", {o.beta1, o.beta2}, who);
  if (betas.size() != 2) throw UsageError(cat(who, " load_state_dict: betas should hold 2 values, got ", betas.size()));
  o.beta1 = betas[0];
  o.beta2 = betas[1];
  o.eps = detail::number_option(state, "eps", o.eps, who);
  o.weight_decay = detail::number_option(state, "weight_decay", o.weight_decay, who);
  o.amsgrad = detail::flag_option(state, "amsgrad", o.amsgrad, who);
  o.maximize = detail::flag_option(state, "maximize", o.maximize, who);
  check(o);
  std::vector<Moments> loaded(params().size());
  for (size_t i = 0; i < params().size(); ++i) {
    const auto& entries =
        detail::checked_entries(state, i, params()[i], who, {"step", "exp_avg", "exp_avg_sq"}, {"max_exp_avg_sq"});
    if (entries.empty()) continue;
    Moments& s = loaded[i];
    s.step = detail::step_count(entries.at("step"), i, who);
    s.exp_avg = entries.at("exp_avg").clone();
    s.exp_avg_sq = entries.at("exp_avg_sq").clone();
    if (auto found = entries.find("max_exp_avg_sq"); found != entries.end()) s.max_exp_avg_sq = found->second.clone();
    if (o.amsgrad && !s.max_exp_avg_sq.defined())
      throw UsageError(cat(who, " load_state_dict: amsgrad is on but parameter ", i, " has no max_exp_avg_sq entry"));
  }
  const std::optional<double> initial_lr = loaded_initial_lr(state, who);
  options_ = o;  // nothing changes unless every check passed
  set_initial_lr(initial_lr);
  moments_ = std::move(loaded);
}

}  // namespace minidl::optim
