// bench_lesson: the lesson's runs (train 5 epochs + the two evaluations, as digits does)
// on one thread, beside their GEMM floor: the same sgemm calls, same shapes, replayed
// alone in this process. Prints each run and the total, per optimizer step, and the ratio.
#include <cxxopts.hpp>
#include <iostream>
#include <sstream>
#include <tuple>

#include "timing.hpp"
#include "lesson/train_run.hpp"
#include "minidl/minidl.hpp"

using namespace minidl;

namespace {

struct Figures {
  bench::Timing run{0.0, 0.0}, floor{0.0, 0.0};
  size_t steps = 0, gemms = 0;
};

// Wall and CPU time, each against its own floor: on a busy machine CPU time is steadier.
void print(const std::string& name, const Figures& f) {
  std::printf("%-7s wall %7.1f ms %6.1f us/step, floor %6.1f ms: %.2fx | cpu %7.1f ms, floor %6.1f ms: %.2fx  "
              "(%zu steps, %zu sgemm)\n",
              name.c_str(), f.run.wall * 1e3, f.run.wall / double(f.steps) * 1e6, f.floor.wall * 1e3,
              f.run.wall / f.floor.wall, f.run.cpu * 1e3, f.floor.cpu * 1e3, f.run.cpu / f.floor.cpu, f.steps, f.gemms);
}

Figures measure(const data::DigitsSplit& data, lesson::NormKind norm, int repeats) {
  lesson::TrainOptions options;
  options.norm = norm;
  Figures f;
  auto run = [&] { f.steps = lesson::train_run(data, options).curve.size(); };
  run();  // warm: the block cache, OpenBLAS's buffers, the page cache
  const auto calls = bench::record_gemm_calls(run);
  std::tie(f.run, f.floor) = bench::time_against_floor(repeats, run, calls);
  f.gemms = calls.size();
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("bench_lesson", "The lesson's runs against their GEMM floor, single thread.");
  options.add_options()
    ("norm", "comma list of runs", cxxopts::value<std::string>()->default_value("none,batch,layer"))
    ("repeats", "timed repeats (the best counts)", cxxopts::value<int>()->default_value("5"))
    ("threads", "threads for OpenMP and OpenBLAS", cxxopts::value<int>()->default_value("1"))
    ("data", "directory with digits.csv and the split files", cxxopts::value<std::string>()->default_value(MINIDL_DATA_DIR))
    ("help", "show this help");
  auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  set_num_threads(args["threads"].as<int>());
  const data::DigitsSplit data = data::load_digits(args["data"].as<std::string>());
  Figures total;
  std::stringstream list(args["norm"].as<std::string>());
  for (std::string name; std::getline(list, name, ',');) {
    const Figures f = measure(data, lesson::parse_norm(name), args["repeats"].as<int>());
    print(name, f);
    total.run.wall += f.run.wall;
    total.run.cpu += f.run.cpu;
    total.floor.wall += f.floor.wall;
    total.floor.cpu += f.floor.cpu;
    total.steps += f.steps;
    total.gemms += f.gemms;
  }
  print("lesson", total);
}
