#pragma once
// LRScheduler: the base of the learning-rate schedules, as torch.optim.lr_scheduler's.
//
//   optim::AdamW optimizer(model.parameters(), {.lr = 1e-3});
//   optim::CosineAnnealingLR schedule(optimizer, {.T_max = 1000});
//   for (...) { ...; optimizer.step(); schedule.step(); }
//
// Building a schedule sets the optimizer's lr for step 0 (last_epoch 0); each step() after
// optimizer.step() moves to the next epoch and sets the lr again. The schedules are
// PyTorch's chainable forms: each computes the new lr from the optimizer's current one, so
// rounding follows PyTorch's float64 arithmetic value for value.
#include <cstdint>
#include <optional>
#include <vector>

#include "minidl/optim/optimizer.hpp"

namespace minidl::optim {

/// What a schedule's state_dict holds (PyTorch: base_lrs, last_epoch, _step_count, _last_lr;
/// SequentialLR: its schedules' states too). A schedule's options are its constructor's.
struct SchedulerState {
  double base_lr = 0.0;
  int64_t last_epoch = -1;
  int64_t step_count = 0;
  double last_lr = 0.0;
  std::vector<SchedulerState> schedulers;  // SequentialLR's, in order
};

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  /// The next epoch's lr, set on the optimizer; call after optimizer.step().
  virtual void step();
  /// The lr the last step (or the constructor) set.
  double get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  /// The lr the schedule is relative to: the optimizer's initial_lr.
  double base_lr() const { return base_lr_; }
  Optimizer& optimizer() const { return optimizer_; }

  virtual SchedulerState state_dict() const;
  /// Takes a state_dict() of the same kind of schedule; the optimizer's lr is not changed
  /// (load the optimizer's own state for it). Throws UsageError for a SequentialLR state
  /// with another number of schedules.
  virtual void load_state_dict(const SchedulerState& state);

 protected:
  /// Sets the optimizer's initial_lr to its lr unless a schedule set it already.
  explicit LRScheduler(Optimizer& optimizer);
  /// PyTorch's _initial_step: every constructor of a concrete schedule ends with it.
  void initial_step();
  /// The lr of epoch last_epoch() from the optimizer's current lr (PyTorch's get_lr).
  virtual double chained_lr() const = 0;
  /// The lr of epoch last_epoch() from base_lr() alone, for the schedules that have one
  /// (PyTorch's _get_closed_form_lr); else the chained form.
  virtual std::optional<double> closed_form_lr() const { return std::nullopt; }
  /// PyTorch's step(epoch): jumps to `epoch` (SequentialLR's step at a milestone).
  void step_to(int64_t epoch);

  friend class SequentialLR;

  Optimizer& optimizer_;
  double base_lr_;
  int64_t last_epoch_ = -1;
  int64_t step_count_ = 0;  // step() calls since the initial step (PyTorch's _step_count)
  double last_lr_ = 0.0;

 private:
  void apply(double lr);
};

}  // namespace minidl::optim
