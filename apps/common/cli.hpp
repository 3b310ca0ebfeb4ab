#pragma once
// The command line as digits and charlm read it: every value read as text and parsed here, so
// that each message names its option (cxxopts' own numbers would take "0x10" as 16 and report
// "Argument '' failed to parse"), and the options both programs take, read once. A bad value
// is a UsageError (exit code 2).
#include <cstdint>
#include <cxxopts.hpp>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "minidl/tensor/error.hpp"
#include "output_checks.hpp"

namespace minidl::apps {

inline constexpr int64_t kMost = std::numeric_limits<int64_t>::max();

/// The most threads or jobs an option may ask for.
inline constexpr int64_t kMaxThreads = 1024;

/// The whole text as a decimal integer in [low, high] ("0x10", "1e3", " 5", "" are refused).
int64_t parse_whole(const std::string& option, const std::string& text, int64_t low, int64_t high = kMost);

/// The whole text as a decimal number ("nan" and "inf" read as such).
double parse_real(const std::string& option, const std::string& text);

/// "layer,rms" -> each item through parse_item, in order; an item listed twice is refused.
template <typename Parse>
auto comma_list(const std::string& option, const std::string& list, Parse parse_item) {
  std::vector<decltype(parse_item(std::string()))> items;
  std::set<std::string> seen;
  for (size_t start = 0; start <= list.size();) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, end - start);
    if (!seen.insert(item).second) throw UsageError(cat(option, " lists \"", item, "\" twice"));
    items.push_back(parse_item(item));
    start = end + 1;
  }
  return items;
}

/// One option: its group in --help ("" the first), name, help, default (null: none) and the
/// name of its value (null: a flag without one). Every value is read as text, parsed below.
struct OptionSpec {
  const char* group;
  const char* name;
  const char* help;
  const char* default_value;
  const char* value_name;
};

/// A program's options, in --help's order.
cxxopts::Options declare_options(const std::string& program, const std::string& description,
                                 std::span<const OptionSpec> specs);

/// A parsed command line. Unless it asks for --help, refuses a stray argument and an option
/// given twice (it would silently keep one of its values).
class CommandLine {
 public:
  CommandLine(cxxopts::Options& options, int argc, char** argv);

  bool given(const char* name) const { return args_.count(name) > 0; }
  /// The value given or the option's default; "" for an option without default not given.
  std::string text(const char* name) const;
  int64_t whole(const char* name, int64_t low, int64_t high = kMost) const;
  double real(const char* name) const;
  /// A finite number above 0.
  double positive(const char* name) const;
  /// When the line asks for --help: prints options' help to stdout and returns true.
  bool print_help(const cxxopts::Options& options) const;

 private:
  cxxopts::ParseResult args_;
};

/// The options both programs take: seeds, threads, the output files, data parallelism.
struct SharedSettings {
  std::vector<uint64_t> seeds;
  std::optional<int> threads;
  bool quiet = false;
  std::string curves, val_curves, summary, save_dir, init_from_dir, batch_order;
  std::string stats;         // --stats FILE: the layers' statistics as CSV
  int64_t stats_every = 0;   // --stats-every N; 0: lesson::default_stats_every of the run's steps
  std::string tensorboard;   // --tensorboard DIR: event files per run (tensorboard_logs.hpp)
  std::string report;        // --report FILE.html: the comparison page (report_page.hpp)
  bool distributed = false;  // --distributed: data-parallel over the processes mpirun started
  bool sync_bn = false;      // --sync-bn: the BatchNorms as SyncBatchNorm (with --distributed)
  bool print = true;         // false on the ranks other than 0: no results or failures printed

  /// A rank other than 0: no progress, results or files (rank 0 prints and writes them).
  void keep_quiet();
  /// DIR/<run>.safetensors with one seed, DIR/<run>_seed<S>.safetensors with several.
  std::string checkpoint_path(const std::string& run, uint64_t seed) const;
  /// --init-from's DIR/<run>.safetensors.
  std::string init_path(const std::string& run) const;
  /// The files these options read (--batch-order, --init-from's) and write (the outputs,
  /// every seed's checkpoint) for these runs, for check_outputs (output_checks.hpp).
  void add_files(const std::vector<std::string>& runs, std::vector<NamedFile>& inputs,
                 std::vector<NamedFile>& outputs) const;
};

/// Reads --seeds, --threads, --quiet, the output files' options, --stats-every, --distributed
/// and --sync-bn; refuses --stats-every without --stats and --sync-bn without --distributed.
void read_shared(const CommandLine& line, SharedSettings& s);

}  // namespace minidl::apps
