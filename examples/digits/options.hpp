#pragma once
// The digits program's command line: every option, its default, and the checks that turn a
// bad value into one line naming the option and what it expected (UsageError: exit code 2).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lesson/train_run.hpp"

namespace minidl::digits {

struct Settings {
  std::vector<lesson::NormKind> norms;
  std::vector<uint64_t> seeds;
  lesson::TrainOptions train;  // norm, seed, init and batch_order are filled per run / after loading
  std::optional<int> threads;
  int jobs = 1;
  std::string data_dir, curves, validation, summary, save_dir, init_from_dir, batch_order;
  std::string stats;        // --stats FILE: the layers' statistics as CSV
  int64_t stats_every = 0;  // --stats-every N; 0: lesson::default_stats_every of the run's steps
  bool quiet = false;
  bool summary_model = false;  // --summary-model: print each model's table, train nothing
  bool distributed = false;    // --distributed: data-parallel over the processes mpirun started
  bool sync_bn = false;        // --sync-bn: BatchNorm layers as SyncBatchNorm (with --distributed)
  bool print = true;           // false on the ranks other than 0: no results or failures printed
};

/// The most threads or jobs an option may ask for.
inline constexpr int64_t kMaxThreads = 1024;

/// The settings of a command line, or nothing when it asked for --help (printed to stdout).
/// Throws UsageError naming the option for a value that is no decimal number of the right
/// kind or outside its range, an option given twice, an unknown option or a stray argument.
std::optional<Settings> parse_settings(int argc, char** argv);

/// The whole text as a decimal integer in [low, high] ("0x10", "1e3", " 5", "" are refused).
int64_t parse_whole(const std::string& option, const std::string& text, int64_t low, int64_t high);
/// The whole text as a finite decimal number.
double parse_real(const std::string& option, const std::string& text);
/// "none,batch,layer" -> the norms in that order; an empty item or a norm twice is refused.
std::vector<lesson::NormKind> parse_norms(const std::string& list);

}  // namespace minidl::digits
