#pragma once
// Drives the built charlm program (apps/charlm/charlm.cpp) from the tests: a small word
// list, a small fast model, and runs that collect exit status and output.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace minidl::testing {

/// 120 short words of a-z ("ab", "bc", ... "zab"), every 10th for validation (no split files).
inline std::string charlm_word_list() {
  std::string text;
  for (int i = 0; i < 120; ++i) {
    for (int j = 0; j <= 1 + i % 3; ++j) text += char('a' + (i * 7 + j * 3) % 26);
    text += "\n";
  }
  return text;
}

/// A small fast model: --steps given per test.
inline const std::vector<std::string> kSmallCharlm{
    "--layers", "1", "--width", "16", "--heads", "2", "--batch-size", "8", "--seeds", "0", "--quiet", "--threads", "1"};

/// Runs charlm in dir with args (after the small model's options unless small is false).
inline ProcessResult run_charlm(const TempDir& dir, std::vector<std::string> args, bool small = true) {
  if (small) args.insert(args.begin(), kSmallCharlm.begin(), kSmallCharlm.end());
  return run_program(MINIDL_CHARLM_EXE, dir.path(), args);
}

}  // namespace minidl::testing
