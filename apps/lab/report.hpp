#pragma once
// The report: per experiment a CSV of its records and a Markdown section; README.md gathers
// the sections of every experiment found in the output directory.
#include <string>
#include <vector>

#include "lab.hpp"

namespace minidl::lab {

/// "## 3. Title" ... with claim, source, set-up, rule, table, pictures and verdict.
std::string section_markdown(const Experiment& experiment, size_t number, const Settings& settings,
                             const Outcome& outcome);

/// Writes out_dir/<name>.csv and out_dir/<name>.md.
void write_experiment(const Experiment& experiment, size_t number, const Settings& settings,
                      const std::vector<Record>& records, const Outcome& outcome);

/// Writes out_dir/README.md: an overview (each experiment's verdict) and every section file
/// present; `timing` (empty unless this was `lab run all`) says how long it took and is kept
/// in out_dir/run_all_timing.txt for later partial runs.
void write_readme(const std::string& out_dir, const std::string& timing);

}  // namespace minidl::lab
