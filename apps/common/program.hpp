#pragma once
// What digits and charlm do alike around their runs: main's exit codes, each output written
// on its own, the last word when stdout failed or a signal stopped the runs, the --summary
// file's frame, and the pages comparing the runs.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "cli.hpp"
#include "minidl/tensor/error.hpp"
#include "run_log.hpp"

namespace minidl::apps {

/// The machine cannot give what the program needs (an address-space limit, memory): the
/// program exits with 1, not 2, since the options themselves are fine.
struct ResourceError : Error {
  using Error::Error;
};

/// run()'s exit code; after an exception one line "<program>: ..." on stderr and 2 for bad
/// usage (UsageError, cxxopts' errors, a path the filesystem refuses), else 1.
/// out_of_memory says what a std::bad_alloc means.
int guarded_main(
    const std::string& program, const std::function<int()>& run,
    const std::function<std::string()>& out_of_memory = [] { return std::string("out of memory"); });

/// Runs write(); when it throws, says why on stderr and returns false: the other outputs
/// still go out.
bool write_reporting(const std::string& program, const std::function<void()>& write);

/// The exit code of a finished invocation: 128 + the signal that stopped the runs, else 1
/// when something failed or stdout could not take the results (printed false), else 0.
/// Says on stderr which of those happened.
int exit_code(const std::string& program, bool failed, bool printed);

/// The --summary file: the settings, "interrupted" (the signal that stopped the runs, or
/// null), then each of `tables` (such as "runs"), and with --distributed the ranks and what
/// this rank handed to collectives over every run (the same on every rank). JSON, two-space
/// indented; bytes that are not UTF-8 written as U+FFFD.
std::string summary_json(const SharedSettings& s, const nlohmann::ordered_json& settings, int stop_signal,
                         const nlohmann::ordered_json& tables);

/// Writes --tensorboard (summary_json's settings as each event file's text) and --report (the
/// page `title`, with the results table), each that was asked for; throws naming what failed.
void write_comparisons(const SharedSettings& s, const std::vector<RunLog>& logs, const std::string& summary_json,
                       const std::string& title, const std::string& results_table);

}  // namespace minidl::apps
