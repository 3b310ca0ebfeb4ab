#pragma once
// The lesson's statistics (--stats): which layers the recorder watches in deep_net, which
// steps it records, and the CSV of every run's snapshots.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "minidl/diagnostics/stats_recorder.hpp"
#include "minidl/nn/sequential.hpp"

namespace minidl::lesson {

struct RunResult;

/// The recorder for any of the lesson's models, its modules walked depth first: every
/// activation's output and gradient as "tanh1".., "relu1".., "gelu1".., "silu1".. (outputs
/// binned over [-1, 1] when every activation is a Tanh, as in deep_net), every Linear's and
/// Conv2d's weight as "linear1.weight".., "conv1.weight"..
std::unique_ptr<diagnostics::StatsRecorder> lesson_recorder(nn::Module& model);

/// Optimizer steps in one epoch over `examples` (the short last batch counts unless dropped).
inline int64_t steps_per_epoch(int64_t examples, int64_t batch_size, bool drop_last) {
  // Without examples + batch_size - 1, which overflows for a batch size near INT64_MAX.
  const int64_t full = examples / batch_size;
  return drop_last || examples % batch_size == 0 ? full : full + 1;
}

/// Steps recorded: every `every`-th, and the last of each epoch (the plots' default step).
inline bool records_step(int64_t step, int64_t every, int64_t steps_per_epoch) {
  return every > 0 && (step % every == 0 || step % steps_per_epoch == 0);
}

/// A sensible --stats-every for a run of `steps` steps: about 30 snapshots (or every step).
inline int64_t default_stats_every(int64_t steps) { return steps >= 60 ? steps / 30 : 1; }

/// Every snapshot of every run as CSV: header "run,seed,step,layer,quantity,statistic,value",
/// values with 9 significant digits.
std::string stats_csv(const std::vector<RunResult>& results);
/// One run's snapshots as rows of that CSV (charlm's too), the run named `run`.
std::string stats_rows(const std::string& run, uint64_t seed, const diagnostics::StatsLog& stats);

}  // namespace minidl::lesson
