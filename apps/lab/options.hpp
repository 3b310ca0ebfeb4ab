#pragma once
// The lab's command line: `lab list`, `lab run NAME... | all [--seeds --out --quick --jobs --data]`.
// A bad value is one line naming the option and what it expected (UsageError: exit code 2).
#include <optional>
#include <string>
#include <vector>

#include "lab.hpp"

namespace minidl::lab {

struct Command {
  enum class Kind { Help, List, Run } kind = Kind::Help;
  std::vector<std::string> names;  // the experiments to run
  Settings settings;
  std::string help;  // the usage text
};

/// The command of a command line. Throws UsageError for no or an unknown command, `run`
/// without names, a bad seed list, a --jobs that is no whole number in 1..1024, an
/// --out that cannot be created or written, or an unknown option.
Command parse_command(int argc, char** argv);

}  // namespace minidl::lab
