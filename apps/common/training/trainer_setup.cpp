#include "training/trainer_setup.hpp"

#include "minidl/optim/adam.hpp"
#include "minidl/optim/adamw.hpp"
#include "minidl/optim/lr_scheduler/cosine_annealing_lr.hpp"
#include "minidl/optim/lr_scheduler/linear_lr.hpp"
#include "minidl/optim/lr_scheduler/sequential_lr.hpp"
#include "minidl/optim/lr_scheduler/step_lr.hpp"
#include "minidl/optim/sgd.hpp"

namespace minidl::lesson {

std::string short_name(OptimizerKind kind) {
  return kind == OptimizerKind::Sgd ? "sgd" : kind == OptimizerKind::Adam ? "adam" : "adamw";
}

std::string short_name(ScheduleKind kind) {
  return kind == ScheduleKind::Constant ? "constant" : kind == ScheduleKind::Cosine ? "cosine" : "step";
}

std::unique_ptr<optim::Optimizer> make_optimizer(const TrainerSetup& s, double lr, std::vector<Tensor> params) {
  if (s.optimizer == OptimizerKind::Sgd)
    return std::make_unique<optim::SGD>(
        std::move(params),
        optim::SGDOptions{
            .lr = lr, .momentum = s.momentum.value_or(0.0), .weight_decay = s.weight_decay.value_or(0.0)});
  const std::array<double, 2> betas = s.betas.value_or(std::array<double, 2>{0.9, 0.999});
  if (s.optimizer == OptimizerKind::Adam)
    return std::make_unique<optim::Adam>(
        std::move(params),
        optim::AdamOptions{
            .lr = lr, .beta1 = betas[0], .beta2 = betas[1], .weight_decay = s.weight_decay.value_or(0.0)});
  return std::make_unique<optim::AdamW>(
      std::move(params),
      optim::AdamWOptions{
          .lr = lr, .beta1 = betas[0], .beta2 = betas[1], .weight_decay = s.weight_decay.value_or(1e-2)});
}

std::shared_ptr<optim::LRScheduler> make_schedule(const TrainerSetup& s, optim::Optimizer& optimizer,
                                                  int64_t total_steps, int64_t steps_per_epoch) {
  std::shared_ptr<optim::LRScheduler> warmup, main;
  if (s.warmup > 0)
    warmup = std::make_shared<optim::LinearLR>(
        optimizer, optim::LinearLROptions{.start_factor = kWarmupStartFactor, .total_iters = s.warmup});
  if (s.schedule == ScheduleKind::Cosine)
    main = std::make_shared<optim::CosineAnnealingLR>(optimizer,
                                                      optim::CosineAnnealingLROptions{.T_max = total_steps - s.warmup});
  if (s.schedule == ScheduleKind::Step)
    main = std::make_shared<optim::StepLR>(optimizer,
                                           optim::StepLROptions{.step_size = steps_per_epoch, .gamma = kStepGamma});
  if (warmup && main)
    return std::make_shared<optim::SequentialLR>(
        optimizer, std::vector<std::shared_ptr<optim::LRScheduler>>{warmup, main}, std::vector<int64_t>{s.warmup});
  return warmup ? warmup : main;  // nothing for a constant lr without warmup
}

}  // namespace minidl::lesson
