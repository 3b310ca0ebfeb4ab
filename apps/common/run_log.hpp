#pragma once
// One run's curves as the programs' CSVs hold them (--curves, --val-curves, --stats), in one
// shape for digits and charlm, for the TensorBoard logs (tensorboard_logs.hpp) and the
// comparison page (report_page.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "minidl/diagnostics/stats_recorder.hpp"

namespace minidl::apps {

struct StepPoint {
  int64_t step;  // counts from 1
  float loss;
  double lr;  // the learning rate the step used
};

struct EvalPoint {
  int64_t step;  // the last step before the evaluation
  float loss;
  std::optional<float> accuracy;  // where the program measures one
};

struct RunLog {
  std::string name;  // the run as the CSVs name it: "batch", "layer-pre"
  uint64_t seed = 0;
  std::vector<StepPoint> steps{};
  std::vector<EvalPoint> evals{};
  const diagnostics::StatsLog* stats = nullptr;  // --stats' snapshots, or none
};

}  // namespace minidl::apps
