#pragma once
// digits' runs for --tensorboard and --report (apps/common's tensorboard_logs.hpp and
// report_page.hpp), and the results table both the terminal and the page show.
#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"
#include "run_log.hpp"
#include "training/digits_train.hpp"

namespace minidl::digits {

/// Each run's curves as the CSVs hold them, with the lr of every step; the runs' training
/// split has train_examples examples.
std::vector<apps::RunLog> run_logs(const Settings& s, const std::vector<lesson::RunResult>& results,
                                   int64_t train_examples);

/// The results as printed: the lesson's line per run with one seed, else the seeds' table.
std::string results_text(const Settings& s, const std::vector<lesson::RunResult>& results);

/// Writes --tensorboard and --report, each that was asked for; throws naming what failed.
void write_comparisons(const Settings& s, const std::vector<lesson::RunResult>& results, int64_t train_examples);

}  // namespace minidl::digits
