// lab: every claim of the lesson as an experiment with a computed verdict (docs/lab/README.md).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>

#include "minidl/tensor/error.hpp"
#include "models/charlm_model.hpp"
#include "options.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "runs/seeds.hpp"
#include "tools.hpp"

using namespace minidl;
using namespace minidl::lab;

namespace {

using Clock = std::chrono::steady_clock;

void list_experiments() {
  size_t number = 0;
  for (const Chapter& chapter : chapters()) {
    std::printf("%s%s\n", number == 0 ? "" : "\n", chapter.title.c_str());
    for (const auto& e : chapter.experiments)
      std::printf("%2zu. %-18s %s (%s)\n", ++number, e->name().c_str(), e->claim().c_str(), e->source().c_str());
  }
}

// On a terminal one line redrawn in place; otherwise a plain line at every tenth of the jobs.
Progress progress_printer(Clock::time_point start) {
  const bool terminal = isatty(STDERR_FILENO) != 0;
  return [terminal, start, last_tenth = size_t{0}](size_t done, size_t total, double cost_done) mutable {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const double left = cost_done > 0 ? elapsed * (1.0 - cost_done) / cost_done : 0.0;
    if (terminal) {
      std::fprintf(stderr, "\rlab: %zu/%zu runs done, %.0f s elapsed, about %.0f s left   %s", done, total, elapsed,
                   left, done == total ? "\n" : "");
    } else if (const size_t tenth = done * 10 / total; tenth > last_tenth || done == total) {
      last_tenth = tenth;
      std::fprintf(stderr, "lab: %zu/%zu runs done, %.1f s elapsed, about %.0f s left\n", done, total, elapsed, left);
    }
  };
}

int run(const Command& command) {
  const Settings& s = command.settings;
  const auto experiments = select_experiments(command.names);
  if (!gnuplot_available())
    throw Error(
        "gnuplot is not on PATH, and the lab draws its pictures with it: install gnuplot (apt-get install "
        "gnuplot-nox)");
  const data::DigitsSplit data = data::load_digits(s.data_dir);
  const charlm::WordSplit words = charlm::load_split(s.data_dir + "/words.txt", charlm::ModelOptions{}.block_size - 1);
  const Context context{s, data, words};
  std::vector<Job> jobs;
  std::vector<size_t> first_job;  // per experiment, its first job's index
  for (const auto& e : experiments) {
    first_job.push_back(jobs.size());
    for (Job& job : e->plan(context)) jobs.push_back(std::move(job));
  }
  first_job.push_back(jobs.size());
  const auto start = Clock::now();
  const std::clock_t cpu_start = std::clock();
  const auto records = run_jobs(jobs, s.jobs, progress_printer(start));
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu = double(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  const auto& known = all_experiments();
  for (size_t k = 0; k < experiments.size(); ++k) {
    std::vector<Record> mine;
    for (size_t j = first_job[k]; j < first_job[k + 1]; ++j)
      mine.insert(mine.end(), records[j].begin(), records[j].end());
    const Outcome outcome = experiments[k]->judge(mine, s);
    const size_t number = size_t(std::find(known.begin(), known.end(), experiments[k]) - known.begin()) + 1;
    write_experiment(*experiments[k], number, s, mine, outcome);
    std::printf("%-18s %s\n", experiments[k]->name().c_str(), verdict_text(outcome.decision.verdict).c_str());
  }
  const std::string timing =
      cat("The last run (", jobs.size(), " runs, seeds ", lesson::seeds_text(s.seeds), s.quick ? ", --quick" : "", ", ",
          s.jobs, " jobs) took ", fixed(wall, 0), " s of wall-clock time and ", fixed(cpu, 1),
          " s of CPU time (all threads; the wall-clock time grows when other work shares the cores).");
  write_readme(s.out_dir, command.names.size() == 1 && command.names.front() == "all" ? timing : "");
  std::printf("%s\n", timing.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Command command = parse_command(argc, argv);
    switch (command.kind) {
      case Command::Kind::Help:
        std::cout << command.help;
        return 0;
      case Command::Kind::List:
        list_experiments();
        return 0;
      case Command::Kind::Run:
        return run(command);
    }
  } catch (const UsageError& e) {
    std::fprintf(stderr, "lab: %s\n", e.what());
    return 2;
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "lab: %s (see lab --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lab: %s\n", e.what());
    return 1;
  }
  return 1;
}
