#pragma once
// charlm's command line: every option and its default, parsed and checked once into the
// Settings the rest of the program trusts. A bad value is one line naming the option
// (UsageError: exit code 2).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attention_dump.hpp"
#include "cli.hpp"
#include "sample.hpp"
#include "training/charlm_train.hpp"

namespace minidl::charlm {

struct Settings : apps::SharedSettings {
  std::vector<NormKind> norms;
  std::vector<Position> positions;
  RunOptions run;         // model sizes and training; norm, position, seed, init and batch order per run
  std::string data_file;  // the word list; its split files beside it (data/words.hpp)
  int64_t samples = 0;    // --sample N: words written by each run's model
  SampleOptions sample;
  uint64_t sample_seed = 0;
  std::optional<AttentionRequest> attention;  // --attention WORD,FILE
};

/// The settings of a command line, or nothing when it asked for --help (printed to stdout).
std::optional<Settings> parse_settings(int argc, char** argv);

/// The checks that need the training split's size: a batch larger than the split, a
/// --warmup not shorter than the run.
void check_against_data(const Settings& s, int64_t train_words);

}  // namespace minidl::charlm
