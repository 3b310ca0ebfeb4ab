#pragma once
// --tensorboard DIR: each run's curves as a TensorBoard event file in DIR/<run>/seed<S>/, so
// that `tensorboard --logdir DIR` overlays the runs. Tags: train/loss and train/lr every
// step, val/loss (and val/accuracy) at each evaluation, "<layer>/<quantity>" histograms of
// the --stats snapshots, and the settings as text.
#include <string>
#include <vector>

#include "run_log.hpp"

namespace minidl::apps {

/// Writes every run's event file, replacing the event files an earlier invocation left in
/// the run's directory (as --curves replaces its CSV). Throws minidl::Error naming the path
/// that cannot be written.
void write_tensorboard(const std::string& dir, const std::vector<RunLog>& runs, const std::string& settings_markdown);

/// The "settings" object of a program's --summary JSON, indented as a Markdown code block.
std::string settings_markdown(const std::string& summary_json);

}  // namespace minidl::apps
