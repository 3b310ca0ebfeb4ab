#pragma once
// The digits program's command line: every option, its default, and every check of what it
// asks for, each made once, here (options.cpp reads, option_checks.cpp checks what needs
// several options or the data): a bad value is one line naming the option and what it
// expected (UsageError: exit code 2). The trainer and the model builder (lesson/) trust the
// Settings that come out.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "training/digits_train.hpp"

namespace minidl::digits {

struct Settings : apps::SharedSettings {
  std::vector<lesson::NormKind> norms;
  lesson::TrainOptions train;  // norm, seed, init and batch_order are filled per run / after loading
  int jobs = 1;
  std::string data_dir;
  bool summary_model = false;  // --summary-model: print each model's table, train nothing
};

/// The settings of a command line, or nothing when it asked for --help (printed to stdout).
/// Throws UsageError naming the option for a value that is no decimal number of the right
/// kind or outside its range, an option given twice, an unknown option or a stray argument,
/// and check_settings' refusals.
std::optional<Settings> parse_settings(int argc, char** argv);

/// What parse_settings checks last, norm by norm: a norm the arch has no form of (instance
/// in an MLP, rms in the CNN), GroupNorm's groups not dividing the width (the CNN: its 16
/// channels), and a model whose sizes cannot be built (a shape that overflows).
void check_settings(const Settings& s);

/// The checks that need the training split's size: --drop-last leaving no batch, a --warmup
/// not shorter than the run. Returns the run's optimizer steps (INT64_MAX when more).
int64_t check_against_data(const Settings& s, int64_t train_examples);

}  // namespace minidl::digits
