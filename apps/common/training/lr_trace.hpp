#pragma once
// The learning rate of each step of a run, for the TensorBoard logs (--tensorboard): the
// run's optimizer and schedule rebuilt over a stand-in parameter and stepped as the trainer
// steps them. A schedule depends on the step count alone, so the trace is the run's, and
// the training loops stay as they are.
#include <cstdint>
#include <vector>

#include "training/trainer_setup.hpp"

namespace minidl::lesson {

/// The lr of steps 1..steps of a run whose schedule spans total_steps (make_schedule's).
std::vector<double> lr_trace(const TrainerSetup& setup, double lr, int64_t total_steps, int64_t steps_per_epoch,
                             int64_t steps);

}  // namespace minidl::lesson
