#pragma once
// CosineAnnealingLR as torch.optim.lr_scheduler.CosineAnnealingLR:
//   lr_t = eta_min + (base_lr - eta_min) (1 + cos(pi t / T_max)) / 2,
// computed in PyTorch's chained form; past T_max it rises again (a period of 2 T_max).
#include "minidl/optim/lr_scheduler/lr_scheduler.hpp"

namespace minidl::optim {

struct CosineAnnealingLROptions {
  int64_t T_max = 0;     // required, >= 1: steps from base_lr down to eta_min
  double eta_min = 0.0;  // the lowest lr, >= 0
};

class CosineAnnealingLR : public LRScheduler {
 public:
  /// Throws UsageError for T_max < 1 or a negative eta_min.
  CosineAnnealingLR(Optimizer& optimizer, CosineAnnealingLROptions options);
  const CosineAnnealingLROptions& options() const { return options_; }

 protected:
  double chained_lr() const override;
  std::optional<double> closed_form_lr() const override;

 private:
  CosineAnnealingLROptions options_;
};

}  // namespace minidl::optim
