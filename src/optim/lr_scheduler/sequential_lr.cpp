#include "minidl/optim/lr_scheduler/sequential_lr.hpp"

#include <algorithm>

#include "minidl/tensor/error.hpp"

namespace minidl::optim {

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(optimizer), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  if (schedulers_.empty()) throw UsageError("SequentialLR: expected at least one schedule, got none");
  for (size_t i = 0; i < schedulers_.size(); ++i)
    if (!schedulers_[i] || &schedulers_[i]->optimizer() != &optimizer)
      throw UsageError(cat("SequentialLR: schedule ", i, " is ", schedulers_[i] ? "built on another optimizer" : "null",
                           " (expected every schedule on the optimizer given)"));
  if (milestones_.size() != schedulers_.size() - 1)
    throw UsageError(cat("SequentialLR: expected one milestone fewer than schedules, got ", schedulers_.size(),
                         " schedules and ", milestones_.size(), " milestones"));
  if (!std::is_sorted(milestones_.begin(), milestones_.end()))
    throw UsageError("SequentialLR: the milestones should be in increasing order");
  // As PyTorch: back to the initial lr, undo the step each schedule's constructor took, and
  // take the first schedule's initial step again.
  last_epoch_ = 0;
  optimizer.set_lr(base_lr_);
  for (const auto& s : schedulers_) --s->last_epoch_;
  schedulers_[0]->initial_step();
  last_lr_ = schedulers_[0]->get_last_lr();
}

void SequentialLR::step() {
  ++last_epoch_;
  const auto idx = size_t(std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin());
  LRScheduler& schedule = *schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch_) schedule.step_to(0);
  else schedule.step();
  last_lr_ = schedule.get_last_lr();
}

SchedulerState SequentialLR::state_dict() const {
  SchedulerState state = LRScheduler::state_dict();
  for (const auto& s : schedulers_) state.schedulers.push_back(s->state_dict());
  return state;
}

void SequentialLR::load_state_dict(const SchedulerState& state) {
  if (state.schedulers.size() != schedulers_.size())
    throw UsageError(cat("SequentialLR load_state_dict: the state has ", state.schedulers.size(),
                         " schedules, this SequentialLR has ", schedulers_.size()));
  LRScheduler::load_state_dict(state);
  for (size_t i = 0; i < schedulers_.size(); ++i) schedulers_[i]->load_state_dict(state.schedulers[i]);
}

}  // namespace minidl::optim
