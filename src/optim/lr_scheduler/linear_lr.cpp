#include "minidl/optim/lr_scheduler/linear_lr.hpp"

#include <algorithm>

#include "minidl/tensor/error.hpp"

namespace minidl::optim {

LinearLR::LinearLR(Optimizer& optimizer, LinearLROptions options) : LRScheduler(optimizer), options_(options) {
  if (!(options_.start_factor > 0.0 && options_.start_factor <= 1.0))
    throw UsageError(cat("LinearLR: start_factor=", options_.start_factor, " (expected in (0, 1])"));
  if (!(options_.end_factor >= 0.0 && options_.end_factor <= 1.0))
    throw UsageError(cat("LinearLR: end_factor=", options_.end_factor, " (expected in [0, 1])"));
  if (options_.total_iters < 1)
    throw UsageError(cat("LinearLR: total_iters=", options_.total_iters, " (expected >= 1)"));
  initial_step();
}

double LinearLR::chained_lr() const {
  const double lr = optimizer_.lr(), start = options_.start_factor, end = options_.end_factor;
  if (last_epoch_ == 0) return lr * start;
  if (last_epoch_ > options_.total_iters) return lr;
  return lr * (1.0 + (end - start) / (double(options_.total_iters) * start + double(last_epoch_ - 1) * (end - start)));
}

std::optional<double> LinearLR::closed_form_lr() const {
  const double start = options_.start_factor, end = options_.end_factor;
  const auto t = double(std::min(options_.total_iters, last_epoch_));
  return base_lr_ * (start + (end - start) * t / double(options_.total_iters));
}

}  // namespace minidl::optim
