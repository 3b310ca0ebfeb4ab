#include "minidl/optim/lr_scheduler/lr_scheduler.hpp"

#include "minidl/tensor/error.hpp"

namespace minidl::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  if (!optimizer_.initial_lr()) optimizer_.set_initial_lr(optimizer_.lr());
  base_lr_ = *optimizer_.initial_lr();
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  step();
}

void LRScheduler::step() {
  ++step_count_;
  ++last_epoch_;
  apply(chained_lr());
}

void LRScheduler::step_to(int64_t epoch) {
  ++step_count_;
  last_epoch_ = epoch;
  const std::optional<double> closed = closed_form_lr();
  apply(closed ? *closed : chained_lr());
}

void LRScheduler::apply(double lr) {
  optimizer_.set_lr(lr);
  last_lr_ = lr;
}

SchedulerState LRScheduler::state_dict() const {
  return {
      .base_lr = base_lr_, .last_epoch = last_epoch_, .step_count = step_count_, .last_lr = last_lr_, .schedulers = {}};
}

void LRScheduler::load_state_dict(const SchedulerState& state) {
  base_lr_ = state.base_lr;
  last_epoch_ = state.last_epoch;
  step_count_ = state.step_count;
  last_lr_ = state.last_lr;
}

}  // namespace minidl::optim
