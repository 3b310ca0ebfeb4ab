#include "minidl/optim/lr_scheduler/lambda_lr.hpp"

#include "minidl/tensor/error.hpp"

namespace minidl::optim {

LambdaLR::LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> lr_lambda)
    : LRScheduler(optimizer), lr_lambda_(std::move(lr_lambda)) {
  if (!lr_lambda_) throw UsageError("LambdaLR: lr_lambda is empty (expected a function of the epoch)");
  initial_step();
}

double LambdaLR::chained_lr() const { return base_lr_ * lr_lambda_(last_epoch_); }

}  // namespace minidl::optim
