#pragma once
// Drives the built digits program (apps/digits/digits.cpp) from the tests: its path, a private
// copy of the project's data to break, and runs that collect exit status and output.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace minidl::testing {

inline const std::string kDigitsBinary = MINIDL_DIGITS_EXE;
inline const std::filesystem::path kProjectData = std::filesystem::path(MINIDL_SOURCE_DIR) / "data";

/// args with more added; an option of more that args already has ("--width 32") replaces its
/// value there instead, since digits refuses an option given twice.
inline std::vector<std::string> with_options(std::vector<std::string> args, const std::vector<std::string>& more) {
  for (size_t i = 0; i < more.size(); ++i) {
    auto given = std::find(args.begin(), args.end(), more[i]);
    const bool has_value = i + 1 < more.size() && !more[i + 1].starts_with("--");
    if (more[i].starts_with("--") && given != args.end() && has_value && given + 1 != args.end()) {
      *(given + 1) = more[++i];
    } else {
      args.push_back(more[i]);
    }
  }
  return args;
}

/// A scratch directory holding a copy of the digits data (data/) to corrupt.
class DigitsScratch {
 public:
  DigitsScratch() {
    std::filesystem::create_directories(data());
    for (const char* name : {"digits.csv", "digits_train_indices.txt", "digits_test_indices.txt"})
      std::filesystem::copy_file(kProjectData / name, data() / name);
  }
  std::filesystem::path data() const { return dir.path() / "data"; }
  std::string file(const std::string& name) const { return dir.file(name); }

  /// Runs digits with args (its own data copy unless args name --data).
  ProcessResult run(std::vector<std::string> args) const {
    bool has_data = false;
    for (const std::string& a : args) has_data = has_data || a == "--data" || a.starts_with("--data=");
    if (!has_data) args.insert(args.begin(), {"--data", data().string()});
    args.insert(args.begin(), kDigitsBinary);
    return run_process(args, dir.path());
  }

  TempDir dir;
};

/// Runs the built digits program with args in dir; a crash fails the test.
inline ProcessResult run_digits(const TempDir& dir, const std::vector<std::string>& args) {
  return run_program(kDigitsBinary, dir.path(), args);
}

}  // namespace minidl::testing
