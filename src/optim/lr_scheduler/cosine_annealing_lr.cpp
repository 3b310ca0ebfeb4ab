#include "minidl/optim/lr_scheduler/cosine_annealing_lr.hpp"

#include <cmath>
#include <numbers>

#include "minidl/tensor/error.hpp"

namespace minidl::optim {

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, CosineAnnealingLROptions options)
    : LRScheduler(optimizer), options_(options) {
  if (options_.T_max < 1) throw UsageError(cat("CosineAnnealingLR: T_max=", options_.T_max, " (expected >= 1)"));
  if (!(options_.eta_min >= 0.0))
    throw UsageError(cat("CosineAnnealingLR: eta_min=", options_.eta_min, " (expected >= 0)"));
  initial_step();
}

// PyTorch's get_lr, branch for branch (the recursive form of the closed form below).
double CosineAnnealingLR::chained_lr() const {
  const double pi = std::numbers::pi, lr = optimizer_.lr(), eta_min = options_.eta_min;
  const auto t = double(last_epoch_), T = double(options_.T_max);
  if (last_epoch_ == 0) return lr;
  if (step_count_ == 1 && last_epoch_ > 0) return *closed_form_lr();
  if ((last_epoch_ - 1 - options_.T_max) % (2 * options_.T_max) == 0)
    return lr + (base_lr_ - eta_min) * (1.0 - std::cos(pi / T)) / 2.0;
  return (1.0 + std::cos(pi * t / T)) / (1.0 + std::cos(pi * (t - 1.0) / T)) * (lr - eta_min) + eta_min;
}

std::optional<double> CosineAnnealingLR::closed_form_lr() const {
  const double eta_min = options_.eta_min;
  return eta_min +
         (base_lr_ - eta_min) * (1.0 + std::cos(std::numbers::pi * double(last_epoch_) / double(options_.T_max))) / 2.0;
}

}  // namespace minidl::optim
