// bench_lesson: the lesson's runs (train 5 epochs + the two evaluations, as digits does)
// on one thread, beside their GEMM floor: the same sgemm calls, same shapes, replayed
// alone in this process. Prints each run and the total, per optimizer step, and the ratio.
// --batch-size 1 --epochs 1 measures the small-batch regime; --record-gemm writes the
// sgemm calls of all runs for bench/sgemm_lesson (the floor of the whole process). Then the
// statistics recorder's cost: each run without it against the same run recording every
// N-th step (--stats-every, and each epoch's last step, as digits --stats does).
#include <algorithm>
#include <cxxopts.hpp>
#include <iostream>
#include <sstream>
#include <tuple>
#include <utility>

#include "cli.hpp"
#include "gemm_floor.hpp"
#include "gemm_log.hpp"
#include "lesson.hpp"
#include "minidl/minidl.hpp"

using namespace minidl;

namespace {

struct Figures {
  bench::Timing run{0.0, 0.0}, floor{0.0, 0.0};
  size_t steps = 0, gemms = 0;
};

// Wall and CPU time, each against its own floor: on a busy machine CPU time is steadier.
void print(const std::string& name, const Figures& f) {
  std::printf(
      "%-7s wall %7.1f ms %6.1f us/step, floor %6.1f ms: %.2fx | cpu %7.1f ms, floor %6.1f ms: %.2fx  "
      "(%zu steps, %zu sgemm)\n",
      name.c_str(), f.run.wall * 1e3, f.run.wall / double(f.steps) * 1e6, f.floor.wall * 1e3, f.run.wall / f.floor.wall,
      f.run.cpu * 1e3, f.floor.cpu * 1e3, f.run.cpu / f.floor.cpu, f.steps, f.gemms);
}

Figures measure(const bench::LessonData& data, const bench::LessonRun& options, int repeats,
                std::vector<bench::GemmCall>& all_calls) {
  Figures f;
  auto run = [&] { f.steps = bench::train_lesson(data, options).size(); };
  run();  // warm: the block cache, OpenBLAS's buffers, the page cache
  const auto calls = bench::record_gemm_calls(run);
  std::tie(f.run, f.floor) = bench::time_against_floor(repeats, run, calls);
  f.gemms = calls.size();
  all_calls.insert(all_calls.end(), calls.begin(), calls.end());
  return f;
}

// Best CPU time of `repeats` runs without the recorder and with it, timed alternately so a
// change in the machine's load falls on both.
std::pair<double, double> recorder_cost(const bench::LessonData& data, bench::NormKind norm, int repeats,
                                        int64_t every) {
  const bench::LessonRun off{.norm = norm}, on{.norm = norm, .stats_every = every};
  (void)bench::train_lesson(data, on);  // warm
  double best_off = 1e300, best_on = 1e300;
  for (int r = 0; r < repeats; ++r) {
    best_off = std::min(best_off, bench::best_timing(1, [&] { (void)bench::train_lesson(data, off); }).cpu);
    best_on = std::min(best_on, bench::best_timing(1, [&] { (void)bench::train_lesson(data, on); }).cpu);
  }
  return {best_off, best_on};
}

}  // namespace

int run(int argc, char** argv) {
  cxxopts::Options options("bench_lesson", "The lesson's runs against their GEMM floor, single thread.");
  options.add_options()("norm", "comma list of runs", cxxopts::value<std::string>()->default_value("none,batch,layer"))(
      "repeats", "timed repeats (the best counts)", cxxopts::value<int>()->default_value("5"))(
      "threads", "threads for OpenMP and OpenBLAS", cxxopts::value<int>()->default_value("1"))(
      "batch-size", "examples per step", cxxopts::value<int64_t>()->default_value("64"))(
      "epochs", "epochs per run", cxxopts::value<int64_t>()->default_value("5"))(
      "record-gemm", "write every run's sgemm calls to this file (for bench/sgemm_lesson)",
      cxxopts::value<std::string>())("stats-every", "the recorder's cost: record every N-th step (0: skip)",
                                     cxxopts::value<int64_t>()->default_value("10"))(
      "data", "directory with digits.csv and the split files",
      cxxopts::value<std::string>()->default_value(MINIDL_DATA_DIR));
  const std::optional<cxxopts::ParseResult> parsed = bench::parse_or_help(options, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& args = *parsed;
  set_num_threads(bench::at_least(args, "threads", 1));
  const int repeats = bench::at_least(args, "repeats", 1);
  const int64_t batch_size = bench::at_least<int64_t>(args, "batch-size", 1),
                epochs = bench::at_least<int64_t>(args, "epochs", 1);
  const bench::LessonData data = bench::load_lesson_data(args["data"].as<std::string>());
  Figures total;
  std::vector<bench::GemmCall> all_calls;
  std::stringstream list(args["norm"].as<std::string>());
  for (std::string name; std::getline(list, name, ',');) {
    const bench::LessonRun train{.norm = bench::parse_norm(name), .batch_size = batch_size, .epochs = epochs};
    const Figures f = measure(data, train, repeats, all_calls);
    print(name, f);
    total.run.wall += f.run.wall;
    total.run.cpu += f.run.cpu;
    total.floor.wall += f.floor.wall;
    total.floor.cpu += f.floor.cpu;
    total.steps += f.steps;
    total.gemms += f.gemms;
  }
  print("lesson", total);
  if (args.count("record-gemm"))
    bench::write_gemm_log(bench::make_gemm_log(all_calls), args["record-gemm"].as<std::string>());

  const int64_t every = args["stats-every"].as<int64_t>();
  if (every <= 0) return 0;
  double total_off = 0.0, total_on = 0.0;
  std::stringstream again(args["norm"].as<std::string>());
  for (std::string name; std::getline(again, name, ',');) {
    const auto [off, on] = recorder_cost(data, bench::parse_norm(name), repeats, every);
    std::printf("%-7s stats off cpu %7.1f ms | every %lld: %7.1f ms: %.3fx\n", name.c_str(), off * 1e3,
                static_cast<long long>(every), on * 1e3, on / off);
    total_off += off;
    total_on += on;
  }
  std::printf("%-7s stats off cpu %7.1f ms | every %lld: %7.1f ms: %.3fx\n", "lesson", total_off * 1e3,
              static_cast<long long>(every), total_on * 1e3, total_on / total_off);
  return 0;
}

int main(int argc, char** argv) {
  return minidl::bench::run_program("bench_lesson", [&] { return run(argc, argv); });
}
