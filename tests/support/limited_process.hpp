#pragma once
// Runs a program as a child process confined the way a user might confine it (an address-space
// limit, extra environment) and under a deadline, for the tests of what the programs do when
// the machine gives less than they need.
#include <sys/resource.h>

#include <cerrno>
#include <chrono>
#include <string_view>
#include <thread>

#include "support/process.hpp"

namespace minidl::testing {

/// A run_limited() result: the child's as run_process gives it, and whether the deadline
/// ended it.
struct LimitedResult : ProcessResult {
  bool timed_out = false;  // killed with SIGKILL at the deadline
};

/// How run_limited() confines a child: its address space (RLIMIT_AS, set in the child before
/// it runs the program), variables added to its environment, and a deadline.
struct ChildLimits {
  rlim_t address_space_bytes = RLIM_INFINITY;
  std::vector<std::string> environment;  // "NAME=value" added to the test's own
  std::chrono::seconds deadline{120};    // then SIGKILL: a test that would hang fails instead
};

/// Runs argv like run_process, confined by limits. The child is forked and calls only
/// async-signal-safe functions (dup2, setrlimit, execve) before the program starts, so a
/// test process with OpenMP threads can fork it safely.
inline LimitedResult run_limited(const std::vector<std::string>& argv, const std::filesystem::path& scratch_dir,
                                 const ChildLimits& limits) {
  const auto out = scratch_dir / "process.stdout", err = scratch_dir / "process.stderr";
  std::vector<char*> args, env;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  auto replaced = [&](std::string_view entry) {  // a variable of the test's that limits sets anew
    const std::string_view name = entry.substr(0, entry.find('=') + 1);
    for (const std::string& e : limits.environment)
      if (e.starts_with(name)) return true;
    return false;
  };
  for (char** e = environ; *e != nullptr; ++e)
    if (!replaced(*e)) env.push_back(*e);
  for (const std::string& e : limits.environment) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  const int in_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (in_fd < 0 || out_fd < 0 || err_fd < 0) throw std::runtime_error("cannot open the child's standard files");
  const struct rlimit address_space { limits.address_space_bytes, limits.address_space_bytes };
  const pid_t pid = ::fork();
  if (pid == 0) {  // the child: nothing that allocates or locks until execve
    if (::dup2(in_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0 ||
        ::setrlimit(RLIMIT_AS, &address_space) != 0)
      ::_exit(127);
    ::execve(args[0], args.data(), env.data());
    ::_exit(127);
  }
  ::close(in_fd);
  ::close(out_fd);
  ::close(err_fd);
  if (pid < 0) throw std::runtime_error("cannot fork to start " + argv[0]);
  LimitedResult result;
  const auto deadline = std::chrono::steady_clock::now() + limits.deadline;
  while (true) {
    siginfo_t ended{};  // si_pid stays 0 while the child runs; WNOWAIT: wait_process reaps it below
    if (::waitid(P_PID, id_t(pid), &ended, WEXITED | WNOHANG | WNOWAIT) != 0 && errno != EINTR)
      throw std::runtime_error("waitid failed");
    if (ended.si_pid == pid) break;
    if (std::chrono::steady_clock::now() > deadline && !result.timed_out) {
      result.timed_out = true;
      ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  wait_process(pid, result);
  for (const auto& [file, text] : {std::pair{out, &result.out}, std::pair{err, &result.err}}) {
    *text = slurp(file);
    std::filesystem::remove(file);
  }
  return result;
}

}  // namespace minidl::testing
