#pragma once
// LambdaLR as torch.optim.lr_scheduler.LambdaLR: lr = base_lr * lr_lambda(epoch).
#include <functional>

#include "minidl/optim/lr_scheduler/lr_scheduler.hpp"

namespace minidl::optim {

class LambdaLR : public LRScheduler {
 public:
  /// lr_lambda(epoch) gives the factor of base_lr for each epoch (0, 1, ...); it must be
  /// callable (throws UsageError otherwise) and its lr >= 0.
  LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> lr_lambda);

 protected:
  double chained_lr() const override;

 private:
  std::function<double(int64_t)> lr_lambda_;
};

}  // namespace minidl::optim
