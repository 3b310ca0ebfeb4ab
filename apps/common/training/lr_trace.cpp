#include "training/lr_trace.hpp"

namespace minidl::lesson {

std::vector<double> lr_trace(const TrainerSetup& setup, double lr, int64_t total_steps, int64_t steps_per_epoch,
                             int64_t steps) {
  Tensor stand_in = Tensor::zeros({1});
  stand_in.requires_grad_();
  const auto optimizer = make_optimizer(setup, lr, {stand_in});
  const auto schedule = make_schedule(setup, *optimizer, total_steps, steps_per_epoch);
  std::vector<double> trace;
  for (int64_t step = 1; step <= steps; ++step) {
    trace.push_back(optimizer->lr());
    if (schedule) schedule->step();
  }
  return trace;
}

}  // namespace minidl::lesson
