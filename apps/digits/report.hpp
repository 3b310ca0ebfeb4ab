#pragma once
// What digits prints and writes about its runs beside the curves: the results table, the
// --summary file, and the runs as --tensorboard and --report take them (apps/common's
// tensorboard_logs.hpp and report_page.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"
#include "run_log.hpp"
#include "training/digits_train.hpp"

namespace minidl::digits {

/// The results as printed: the lesson's line per run with one seed, else the seeds' table.
std::string results_text(const Settings& s, const std::vector<lesson::RunResult>& results);

/// The --summary file: the settings, per norm the spread over seeds, and every run. JSON,
/// two-space indented, one key per line. Figures of a run that did not finish are null and
/// its "error" says why; "interrupted" names the signal that stopped the program (null when
/// none did). Paths that are not UTF-8 are written with U+FFFD for each bad byte.
std::string summary_json(const Settings& s, const std::vector<lesson::RunResult>& results, int stop_signal);

/// Each run's curves as the CSVs hold them, with the lr of every step; the runs' training
/// split has train_examples examples.
std::vector<apps::RunLog> run_logs(const Settings& s, const std::vector<lesson::RunResult>& results,
                                   int64_t train_examples);

}  // namespace minidl::digits
