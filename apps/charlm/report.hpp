#pragma once
// What charlm prints and writes about its runs: the results table, the curves, the summary,
// and the runs as --tensorboard and --report take them (apps/common's tensorboard_logs.hpp
// and report_page.hpp), named as the CSVs name them ("layer-pre"), seed by seed.
#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"
#include "run_log.hpp"
#include "training/charlm_train.hpp"

namespace minidl::charlm {

/// Per norm and position (in the order asked for), the mean and range over seeds of the
/// final training loss (the last evaluation interval's mean step loss) and validation loss.
std::string results_table(const Settings& s, const std::vector<RunResult>& results);

/// Every step's training loss: header "run,seed,step,loss", 9 significant digits.
std::string curves_csv(const std::vector<RunResult>& results);
/// Every evaluation's validation loss: header "run,seed,step,val_loss".
std::string val_curves_csv(const std::vector<RunResult>& results);

/// JSON: the settings, whether a signal stopped the program, and a "runs" list (norm,
/// position, seed, train_loss, val_loss, seconds, steps, interrupted, error); figures of a
/// run that did not finish are null.
std::string summary_json(const Settings& s, const std::vector<RunResult>& results, int stop_signal);

/// Each run's curves as the CSVs hold them, with the lr of every step; the runs' training
/// split has train_words words.
std::vector<apps::RunLog> run_logs(const Settings& s, const std::vector<RunResult>& results, int64_t train_words);

}  // namespace minidl::charlm
