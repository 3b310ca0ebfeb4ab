#pragma once
// charlm's runs for --tensorboard and --report (apps/common's tensorboard_logs.hpp and
// report_page.hpp): named as the CSVs name them ("layer-pre"), seed by seed.
#include <cstdint>
#include <vector>

#include "options.hpp"
#include "run_log.hpp"
#include "training/charlm_train.hpp"

namespace minidl::charlm {

/// Each run's curves as the CSVs hold them, with the lr of every step; the runs' training
/// split has train_words words.
std::vector<apps::RunLog> run_logs(const Settings& s, const std::vector<RunResult>& results, int64_t train_words);

/// Writes --tensorboard and --report, each that was asked for; throws naming what failed.
void write_comparisons(const Settings& s, const std::vector<RunResult>& results, int64_t train_words);

}  // namespace minidl::charlm
