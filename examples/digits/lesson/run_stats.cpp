#include "lesson/run_stats.hpp"

#include <cstdio>

#include "lesson/train_run.hpp"
#include "minidl/nn/activation.hpp"
#include "minidl/nn/linear.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::lesson {

std::unique_ptr<diagnostics::StatsRecorder> lesson_recorder(nn::Sequential& model) {
  auto recorder = std::make_unique<diagnostics::StatsRecorder>(diagnostics::StatsOptions{.output_range = 1.0f});
  int tanhs = 0, linears = 0;
  for (size_t i = 0; i < model.size(); ++i) {
    nn::Module& layer = *model[i];
    if (dynamic_cast<nn::Tanh*>(&layer)) recorder->watch_output(cat("tanh", ++tanhs), layer);
    if (auto* linear = dynamic_cast<nn::Linear*>(&layer))
      recorder->watch_parameter(cat("linear", ++linears, ".weight"), linear->weight);
  }
  return recorder;
}

std::string stats_csv(const std::vector<RunResult>& results) {
  std::string csv = "run,seed,step,layer,quantity,statistic,value\n";
  char value[40];
  for (const RunResult& result : results) {
    const std::string run = cat(short_name(result.norm), ",", result.seed, ",");
    for (const diagnostics::StatsRow& row : result.stats) {
      std::snprintf(value, sizeof value, "%.9g\n", row.value);
      csv += cat(run, row.step, ",", row.layer, ",", row.quantity, ",", row.statistic, ",", value);
    }
  }
  return csv;
}

}  // namespace minidl::lesson
