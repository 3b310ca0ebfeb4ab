#pragma once
// Runs a program as a child process (posix_spawn: safe in a process with OpenMP threads) and
// collects its exit status, stdout and stderr. For the tests that drive the built programs.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace minidl::testing {

struct ProcessResult {
  int exit_code = -1;  // the status passed to exit(), or -1 when a signal ended it
  int signal = 0;      // the signal that ended it, 0 when it exited
  std::string out;     // everything it wrote to stdout
  std::string err;     // everything it wrote to stderr
};

/// Starts argv[0] (a path) with argv, stdout and stderr going to the given files.
/// Returns the child's pid; throws std::runtime_error when it cannot be started.
inline pid_t spawn_process(const std::vector<std::string>& argv, const std::string& out_path,
                           const std::string& err_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::to_string(error));
  return pid;
}

/// Waits for pid and decodes its status into result.
inline void wait_process(pid_t pid, ProcessResult& result) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
}

/// How many lines text holds (its newlines).
inline size_t count_lines(const std::string& text) { return size_t(std::count(text.begin(), text.end(), '\n')); }

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Runs argv to completion; its stdout and stderr pass through files in scratch_dir.
inline ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& scratch_dir) {
  const auto out = scratch_dir / "process.stdout", err = scratch_dir / "process.stderr";
  ProcessResult result;
  wait_process(spawn_process(argv, out.string(), err.string()), result);
  result.out = slurp(out);
  result.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return result;
}

/// Runs the program exe with args in dir (its output files go there); a crash fails the test.
inline ProcessResult run_program(const std::string& exe, const std::filesystem::path& dir,
                                 const std::vector<std::string>& args) {
  std::vector<std::string> argv{exe};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult result = run_process(argv, dir);
  REQUIRE(result.signal == 0);
  return result;
}

}  // namespace minidl::testing
