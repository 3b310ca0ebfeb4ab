#pragma once
// StepLR as torch.optim.lr_scheduler.StepLR: the lr is multiplied by gamma every step_size steps.
#include "minidl/optim/lr_scheduler/lr_scheduler.hpp"

namespace minidl::optim {

struct StepLROptions {
  int64_t step_size = 0;  // required, >= 1
  double gamma = 0.1;     // >= 0
};

class StepLR : public LRScheduler {
 public:
  /// Throws UsageError for step_size < 1 or a negative gamma.
  StepLR(Optimizer& optimizer, StepLROptions options);
  const StepLROptions& options() const { return options_; }

 protected:
  double chained_lr() const override;
  std::optional<double> closed_form_lr() const override;

 private:
  StepLROptions options_;
};

}  // namespace minidl::optim
