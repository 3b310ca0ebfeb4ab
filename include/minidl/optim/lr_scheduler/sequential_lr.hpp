#pragma once
// SequentialLR as torch.optim.lr_scheduler.SequentialLR: schedule k runs from milestone k-1
// (0 for the first) to milestone k; at a milestone the next one restarts from its epoch 0.
//
//   optim::SequentialLR schedule(optimizer,
//       {std::make_shared<optim::LinearLR>(optimizer, optim::LinearLROptions{.start_factor = 0.1, .total_iters = 20}),
//        std::make_shared<optim::CosineAnnealingLR>(optimizer, optim::CosineAnnealingLROptions{.T_max = 280})},
//       {20});
#include <memory>
#include <vector>

#include "minidl/optim/lr_scheduler/lr_scheduler.hpp"

namespace minidl::optim {

class SequentialLR : public LRScheduler {
 public:
  /// The schedules (built on `optimizer`, in order) and milestones.size() ==
  /// schedulers.size() - 1 epochs where each next one starts; throws UsageError otherwise.
  /// Resets the optimizer's lr to its initial_lr and restarts the first schedule, as PyTorch.
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones);

  void step() override;
  SchedulerState state_dict() const override;
  void load_state_dict(const SchedulerState& state) override;

 protected:
  double chained_lr() const override { return get_last_lr(); }  // never called: step() delegates

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

}  // namespace minidl::optim
