#pragma once
// The --summary file: the settings, per norm the spread over seeds, and every run.
#include <string>
#include <vector>

#include "options.hpp"
#include "training/digits_train.hpp"

namespace minidl::digits {

/// JSON, two-space indented, one key per line. Figures of a run that did not finish are
/// null and its "error" says why; "interrupted" names the signal that stopped the program
/// (null when none did). Paths that are not UTF-8 are written with U+FFFD for each bad byte.
std::string summary_json(const Settings& s, const std::vector<lesson::RunResult>& results, int stop_signal);

}  // namespace minidl::digits
