#pragma once
// --report FILE.html: one self-contained page comparing the runs: training loss per step and
// validation figures per evaluation, each run's mean over seeds with its min-max band, a
// toggle per run, zoom, a log axis, hover values and the results table. The page's template
// and script (report_page/) and Debian's dygraphs are embedded at build time.
#include <string>
#include <vector>

#include "run_log.hpp"

namespace minidl::apps {

/// The page's HTML. Throws minidl::Error when the build found no dygraphs (the message
/// names the package, libjs-dygraphs).
std::string report_page(const std::string& title, const std::vector<RunLog>& runs, const std::string& results_table);

}  // namespace minidl::apps
