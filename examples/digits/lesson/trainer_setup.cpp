#include "lesson/trainer_setup.hpp"

#include <cmath>

#include "minidl/optim/adam.hpp"
#include "minidl/optim/adamw.hpp"
#include "minidl/optim/lr_scheduler/cosine_annealing_lr.hpp"
#include "minidl/optim/lr_scheduler/linear_lr.hpp"
#include "minidl/optim/lr_scheduler/sequential_lr.hpp"
#include "minidl/optim/lr_scheduler/step_lr.hpp"
#include "minidl/optim/sgd.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::lesson {

OptimizerKind parse_optimizer_kind(const std::string& name) {
  if (name == "sgd") return OptimizerKind::Sgd;
  if (name == "adam") return OptimizerKind::Adam;
  if (name == "adamw") return OptimizerKind::AdamW;
  throw UsageError(cat("--optimizer: unknown optimizer \"", name, "\" (choose sgd, adam or adamw)"));
}

ScheduleKind parse_schedule_kind(const std::string& name) {
  if (name == "constant") return ScheduleKind::Constant;
  if (name == "cosine") return ScheduleKind::Cosine;
  if (name == "step") return ScheduleKind::Step;
  throw UsageError(cat("--schedule: unknown schedule \"", name, "\" (choose constant, cosine or step)"));
}

std::string short_name(OptimizerKind kind) {
  return kind == OptimizerKind::Sgd ? "sgd" : kind == OptimizerKind::Adam ? "adam" : "adamw";
}

std::string short_name(ScheduleKind kind) {
  return kind == ScheduleKind::Constant ? "constant" : kind == ScheduleKind::Cosine ? "cosine" : "step";
}

void check_trainer_setup(const TrainerSetup& s) {
  const bool sgd = s.optimizer == OptimizerKind::Sgd;
  if (s.momentum && !sgd)
    throw UsageError(cat("--momentum applies to --optimizer sgd only, not ", short_name(s.optimizer),
                         " (Adam's momentum is --betas)"));
  if (s.betas && sgd) throw UsageError("--betas applies to --optimizer adam or adamw only, not sgd (see --momentum)");
  if (s.momentum && !(*s.momentum >= 0.0 && std::isfinite(*s.momentum)))
    throw UsageError(cat("--momentum must be a number >= 0, got ", *s.momentum));
  if (s.weight_decay && !(*s.weight_decay >= 0.0 && std::isfinite(*s.weight_decay)))
    throw UsageError(cat("--weight-decay must be a number >= 0, got ", *s.weight_decay));
  if (s.betas) {
    for (double b : *s.betas)
      if (!(b >= 0.0 && b < 1.0)) throw UsageError(cat("--betas: each beta must be in [0, 1), got ", b));
  }
  if (s.warmup < 0) throw UsageError(cat("--warmup must be at least 0, got ", s.warmup));
  if (s.clip && !(*s.clip > 0.0 && std::isfinite(*s.clip)))
    throw UsageError(cat("--clip must be a positive number, got ", *s.clip));
}

void check_trainer_steps(const TrainerSetup& s, int64_t total_steps) {
  if (s.warmup >= total_steps && s.warmup > 0)
    throw UsageError(cat("--warmup ", s.warmup, " is not shorter than the run's ", total_steps,
                         " steps: nothing would train at the full lr"));
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
  check_trainer_steps(s, total_steps);
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
