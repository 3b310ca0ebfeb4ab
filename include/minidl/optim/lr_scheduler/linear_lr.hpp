#pragma once
// LinearLR as torch.optim.lr_scheduler.LinearLR: the lr goes linearly from start_factor *
// base_lr to end_factor * base_lr over total_iters steps, then stays (the usual warmup).
#include "minidl/optim/lr_scheduler/lr_scheduler.hpp"

namespace minidl::optim {

struct LinearLROptions {
  double start_factor = 1.0 / 3;  // in (0, 1]
  double end_factor = 1.0;        // in [0, 1]
  int64_t total_iters = 5;        // >= 1
};

class LinearLR : public LRScheduler {
 public:
  /// Throws UsageError naming the option and its value when out of range.
  LinearLR(Optimizer& optimizer, LinearLROptions options = {});
  const LinearLROptions& options() const { return options_; }

 protected:
  double chained_lr() const override;
  std::optional<double> closed_form_lr() const override;

 private:
  LinearLROptions options_;
};

}  // namespace minidl::optim
