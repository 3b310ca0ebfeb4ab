#pragma once
// Adam (Kingma & Ba 2015) with PyTorch's options, step for step as torch.optim.Adam; AdamW
// (adamw.hpp) is the same update with decoupled weight decay.
#include <vector>

#include "minidl/optim/optimizer.hpp"

namespace minidl::optim {

struct AdamOptions {
  double lr = 1e-3;    // >= 0
  double beta1 = 0.9;  // betas=(0.9, 0.999), each in [0, 1)
  double beta2 = 0.999;
  double eps = 1e-8;          // >= 0
  double weight_decay = 0.0;  // >= 0; Adam: an L2 term in the gradient, AdamW: decoupled
  bool amsgrad = false;       // normalize by the largest second moment so far
  bool maximize = false;      // ascend instead of descend
};

/// For each parameter p with gradient g, t its step count (from 1):
///   g = -g if maximize;  g += weight_decay p  (AdamW instead: p *= 1 - lr weight_decay);
///   m = beta1 m + (1 - beta1) g (as 2.x: m.lerp_(g, 1 - beta1));  v = beta2 v + (1 - beta2) g^2;
///   amsgrad: v_max = max(v_max, v), used below in place of v;
///   p -= lr / (1 - beta1^t) m / (sqrt(v) / sqrt(1 - beta2^t) + eps).
/// The moments (zeros) are allocated on a parameter's first step with a gradient.
class Adam : public Optimizer {
 public:
  /// Throws UsageError naming the option and its value for a negative or NaN lr, eps or
  /// weight_decay, or a beta outside [0, 1).
  Adam(std::vector<Tensor> params, AdamOptions options = {});

  void step() override;
  const AdamOptions& options() const { return options_; }
  std::string type_name() const override { return name(); }
  double lr() const override { return options_.lr; }
  void set_lr(double lr) override;
  /// state[i]: step (0-dim), exp_avg, exp_avg_sq, and max_exp_avg_sq with amsgrad;
  /// param_group: lr, betas, eps, weight_decay, amsgrad, maximize.
  OptimizerState state_dict() const override;
  void load_state_dict(const OptimizerState& state) override;

 protected:
  /// AdamW's constructor: the same update with decoupled weight decay.
  Adam(std::vector<Tensor> params, AdamOptions options, bool decoupled_decay);

 private:
  struct Moments {
    int64_t step = 0;                            // steps taken with a gradient
    Tensor exp_avg, exp_avg_sq, max_exp_avg_sq;  // p's shape; undefined before the first step
  };
  const char* name() const { return decoupled_decay_ ? "AdamW" : "Adam"; }
  void check(const AdamOptions& options) const;

  AdamOptions options_;
  bool decoupled_decay_;
  std::vector<Moments> moments_;  // one per parameter
};

}  // namespace minidl::optim
