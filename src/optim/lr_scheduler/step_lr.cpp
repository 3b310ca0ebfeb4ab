#include "minidl/optim/lr_scheduler/step_lr.hpp"

#include <cmath>

#include "minidl/tensor/error.hpp"

namespace minidl::optim {

StepLR::StepLR(Optimizer& optimizer, StepLROptions options) : LRScheduler(optimizer), options_(options) {
  if (options_.step_size < 1) throw UsageError(cat("StepLR: step_size=", options_.step_size, " (expected >= 1)"));
  if (!(options_.gamma >= 0.0)) throw UsageError(cat("StepLR: gamma=", options_.gamma, " (expected >= 0)"));
  initial_step();
}

double StepLR::chained_lr() const {
  const double lr = optimizer_.lr();
  if (last_epoch_ == 0 || last_epoch_ % options_.step_size != 0) return lr;
  return lr * options_.gamma;
}

std::optional<double> StepLR::closed_form_lr() const {
  return base_lr_ * std::pow(options_.gamma, double(last_epoch_ / options_.step_size));
}

}  // namespace minidl::optim
