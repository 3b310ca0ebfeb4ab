#pragma once
// --stats: per-layer statistics of charlm's training steps through the library's recorder
// (minidl/diagnostics/stats_recorder.hpp), in the CSV digits --stats writes, so
// scripts/plot_stats.sh draws both.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "minidl/diagnostics/stats_recorder.hpp"
#include "models/charlm_model.hpp"

namespace minidl::charlm {

struct RunResult;

/// The recorder for a model: every module's output and the gradient reaching it, under its
/// state_dict-style name ("transformer.wte", "transformer.h.0.ln_1", "transformer.h.0.attn",
/// "transformer.h.0.attn.c_attn", "transformer.h.0" for a block's output, "lm_head"), and every
/// parameter's gradient and update under its state_dict name. Outputs are binned over each
/// snapshot's min..max (nothing here is bounded as tanh is).
std::unique_ptr<diagnostics::StatsRecorder> model_recorder(CharTransformer& model);

/// Steps recorded: the first (the initialization's picture), every `every`-th and the last.
inline bool records_step(int64_t step, int64_t every, int64_t steps) {
  return every > 0 && (step == 1 || step % every == 0 || step == steps);
}

/// Every run's snapshots: header "run,seed,step,layer,quantity,statistic,value" (digits'),
/// run the run's name ("layer-pre"), values with 9 significant digits.
std::string stats_csv(const std::vector<RunResult>& results);

}  // namespace minidl::charlm
