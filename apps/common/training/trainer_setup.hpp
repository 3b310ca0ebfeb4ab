#pragma once
// The trainer's tools a run can ask for beside the lesson's plain SGD: the optimizer (SGD
// with momentum and weight decay, Adam, AdamW), a learning-rate schedule with an optional
// linear warmup, and gradient clipping. The defaults are the lesson's: SGD, no momentum,
// no weight decay, a constant lr, no clipping, the same bits as before these existed.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "minidl/optim/lr_scheduler/lr_scheduler.hpp"
#include "minidl/optim/optimizer.hpp"

namespace minidl::lesson {

enum class OptimizerKind { Sgd, Adam, AdamW };
enum class ScheduleKind { Constant, Cosine, Step };

/// The fraction of the lr a warmup starts from (LinearLR's start_factor).
inline constexpr double kWarmupStartFactor = 0.01;
/// --schedule step: the lr is multiplied by this once per epoch (StepLR's gamma).
inline constexpr double kStepGamma = 0.5;

struct TrainerSetup {
  OptimizerKind optimizer = OptimizerKind::Sgd;
  std::optional<double> momentum{};      // SGD only; default 0
  std::optional<double> weight_decay{};  // default 0 (SGD, Adam) or 1e-2 (AdamW), as PyTorch
  // Adam and AdamW only; default (0.9, 0.999). A std::array: GCC 12 warns (a false
  // maybe-uninitialized) on a non-trivial member skipped by TrainOptions' designated initializers.
  std::optional<std::array<double, 2>> betas{};
  int64_t warmup = 0;  // steps of LinearLR from kWarmupStartFactor, 0: none
  ScheduleKind schedule = ScheduleKind::Constant;
  std::optional<double> clip{};  // clip_grad_norm_'s max_norm (L2) before every step
};

std::string short_name(OptimizerKind kind);
std::string short_name(ScheduleKind kind);

/// The optimizer over params with lr and the setup's options.
std::unique_ptr<optim::Optimizer> make_optimizer(const TrainerSetup& setup, double lr, std::vector<Tensor> params);
/// The schedule for a run of total_steps steps (cosine: down to 0 at the last step, after
/// the warmup; step: kStepGamma every steps_per_epoch), or nothing for a constant lr
/// without warmup. Call its step() after every optimizer step. The warmup is trusted to be
/// shorter than total_steps.
std::shared_ptr<optim::LRScheduler> make_schedule(const TrainerSetup& setup, optim::Optimizer& optimizer,
                                                  int64_t total_steps, int64_t steps_per_epoch);

}  // namespace minidl::lesson
