// bench_wide: a wide net (depth 8 x [Linear(1024, 1024), Tanh], then Linear(1024, 10)),
// batch 512, SGD steps on synthetic data. Prints the time per step and its ratio to the
// GEMM floor (the same sgemm calls replayed alone), at each requested thread count.
#include <cxxopts.hpp>
#include <iostream>

#include "cli.hpp"
#include "gemm_floor.hpp"
#include "minidl/minidl.hpp"

using namespace minidl;

namespace {

struct WideOptions {
  int64_t depth = 8, width = 1024, batch = 512, classes = 10;
  int steps = 60;  // timed one by one, each beside a replay of its sgemm calls
};

std::shared_ptr<nn::Sequential> wide_net(const WideOptions& o, Generator& gen) {
  auto model = std::make_shared<nn::Sequential>();
  for (int64_t i = 0; i < o.depth; ++i) {
    model->push_back(std::make_shared<nn::Linear>(o.width, o.width, gen));
    model->push_back(std::make_shared<nn::Tanh>());
  }
  model->push_back(std::make_shared<nn::Linear>(o.width, o.classes, gen));
  return model;
}

double report(int threads, const WideOptions& o) {
  set_num_threads(threads);
  Generator gen(0);
  auto model = wide_net(o, gen);
  optim::SGD optimizer(model->parameters(), {.lr = 0.01});
  const Tensor inputs = Tensor::randn({o.batch, o.width}, gen);          // (B, width)
  const Tensor targets = Tensor::randint(0, o.classes, {o.batch}, gen);  // (B)
  auto step = [&] {
    optimizer.zero_grad();
    Tensor loss = cross_entropy((*model)(inputs), targets);
    loss.backward();
    optimizer.step();
  };
  step();  // warm: the block cache and OpenBLAS buffers
  // The floor is the step's whole products, made on the same threads by OpenBLAS alone:
  // recorded on one thread, where kernels::gemm does not split them into shares.
  set_num_threads(1);
  const auto calls = bench::record_gemm_calls(step);
  set_num_threads(threads);
  const auto [run, floor] = bench::time_against_floor(o.steps, step, calls);
  std::printf("threads %d: %.1f ms/step, GEMM floor %.1f ms/step (%zu sgemm, %.1f GFLOP/s): wall %.3fx, cpu %.3fx\n",
              threads, run.wall * 1e3, floor.wall * 1e3, calls.size(), bench::gemm_flops(calls) / floor.wall * 1e-9,
              run.wall / floor.wall, run.cpu / floor.cpu);
  return run.wall;
}

}  // namespace

int run(int argc, char** argv) {
  cxxopts::Options options("bench_wide", "Time per SGD step of a wide tanh net against its GEMM floor.");
  options.add_options()("steps", "steps timed, each beside a replay of its sgemm calls (the best of each counts)",
                        cxxopts::value<int>()->default_value("60"))(
      "threads", "comma list of thread counts", cxxopts::value<std::vector<int>>()->default_value("1,2"))(
      "help", "show this help");
  auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  WideOptions o;
  o.steps = bench::at_least(args, "steps", 1);
  std::printf("wide net: depth %lld, width %lld, batch %lld, best of %d steps\n", static_cast<long long>(o.depth),
              static_cast<long long>(o.width), static_cast<long long>(o.batch), o.steps);
  const auto thread_counts = args["threads"].as<std::vector<int>>();
  for (int threads : thread_counts)
    if (threads < 1) throw UsageError(cat("--threads must list counts of at least 1, got ", threads));
  std::vector<double> per_step;
  for (int threads : thread_counts) per_step.push_back(report(threads, o));
  for (size_t i = 1; i < per_step.size(); ++i)
    std::printf("%d threads are %.2fx faster than %d\n", thread_counts[i], per_step[0] / per_step[i], thread_counts[0]);
  return 0;
}

int main(int argc, char** argv) {
  return minidl::bench::run_program("bench_wide", [&] { return run(argc, argv); });
}
