// bench_lesson_by_hand: the lesson's runs three ways, timed in turn on one thread: through
// the framework (train_lesson in lesson.hpp, as bench_lesson runs it), written by hand
// on the same kernels with no framework at all (hand_net.hpp), and their sgemm calls alone
// (the GEMM floor). lesson / by hand is what the framework's bookkeeping costs; by hand /
// floor is what the kernels outside sgemm cost, which no framework on these kernels can go
// below. Both runs of a norm start from the same weights and see the same batches, and
// their step losses must agree (within kLossTolerance; they do bit for bit, calling the same
// kernels in the same order): otherwise the hand-written run is not doing the lesson's work,
// and the program fails (exit 1) instead of printing a floor.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cxxopts.hpp>
#include <iostream>
#include <limits>
#include <sstream>

#include "cli.hpp"
#include "gemm_floor.hpp"
#include "hand_net.hpp"
#include "lesson.hpp"
#include "minidl/minidl.hpp"

using namespace minidl;

namespace {

// One run written by hand: train_lesson's init, batches and evaluations.
// With parts, the time of each part is added there.
std::vector<float> hand_run(const bench::LessonData& data, const bench::LessonRun& o,
                            bench::PartSeconds* parts = nullptr) {
  Generator init(o.seed);
  std::shared_ptr<nn::Sequential> model = bench::lesson_net(o.norm, init);
  bench::HandNet net(*model, std::max(o.batch_size, data.X_train.size(0)));
  net.time_parts(parts);
  data::DataLoader loader(data::TensorDataset(data.X_train, data.y_train),
                          {.batch_size = o.batch_size, .shuffle = true, .seed = o.seed});
  std::vector<float> losses;
  for (int64_t epoch = 1; epoch <= o.epochs; ++epoch) {
    for (const data::Batch& batch : loader.epoch()) {
      losses.push_back(net.forward_backward(batch.inputs.data(), batch.targets.data(), batch.inputs.size(0)));
      net.sgd(float(o.lr));
    }
    (void)net.evaluate(data.X_val, data.y_val);
  }
  (void)net.evaluate(data.X_train, data.y_train);
  (void)net.evaluate(data.X_val, data.y_val);
  return losses;
}

double sum(const bench::PartSeconds& parts) {
  double total = 0.0;
  for (double seconds : parts) total += seconds;
  return total;
}

struct Figures {
  bench::Timing lesson, by_hand, floor;
  bench::PartSeconds parts{};  // the by-hand run timed call by call (the fastest such run)
  double parts_wall = 0.0;     // that run's wall time
  size_t steps = 0;
};

void print(const std::string& name, const Figures& f) {
  std::printf("%-7s by hand, call by call:", name.c_str());
  for (size_t p = 0; p < f.parts.size(); ++p)
    std::printf(" %s %.2f ms%s", bench::kPartNames[p], f.parts[p] * 1e3, p + 1 < f.parts.size() ? "," : "");
  std::printf("; the rest %.2f ms (sgemm %.2fx the floor's wall)\n", (f.parts_wall - sum(f.parts)) * 1e3,
              f.parts[size_t(bench::Part::Products)] / f.floor.wall);
  std::printf(
      "%-7s cpu: lesson %7.1f ms, by hand %7.1f ms, floor %7.1f ms | lesson/floor %.2fx, by hand/floor %.2fx, "
      "lesson/by hand %.2fx (%zu steps; wall %.2fx, %.2fx, %.2fx)\n",
      name.c_str(), f.lesson.cpu * 1e3, f.by_hand.cpu * 1e3, f.floor.cpu * 1e3, f.lesson.cpu / f.floor.cpu,
      f.by_hand.cpu / f.floor.cpu, f.lesson.cpu / f.by_hand.cpu, f.steps, f.lesson.wall / f.floor.wall,
      f.by_hand.wall / f.floor.wall, f.lesson.wall / f.by_hand.wall);
}

// The two runs' step losses side by side: the largest difference, relative to the loss.
double largest_drift(const std::vector<float>& curve, const std::vector<float>& losses) {
  if (curve.size() != losses.size())
    throw std::runtime_error(cat("the hand-written run took ", losses.size(), " steps, the lesson ", curve.size()));
  double drift = 0.0;
  for (size_t i = 0; i < losses.size(); ++i)
    drift = std::max(drift, std::abs(double(losses[i]) - double(curve[i])) / std::abs(double(curve[i])));
  return drift;
}

// Relative: a single float rounding is 6e-8, and the runs make none differently.
constexpr double kLossTolerance = 1e-6;

Figures measure(const bench::LessonData& data, const bench::LessonRun& options, const std::string& name, int repeats) {
  Figures f;
  // The untimed first runs (which warm the caches too) give the losses to compare and the
  // sgemm calls: the hand-written run's for the replay, the lesson's to count.
  std::vector<float> reference;
  const size_t lesson_calls = bench::record_gemm_calls([&] { reference = bench::train_lesson(data, options); }).size();
  std::vector<float> losses;
  const std::vector<bench::GemmCall> calls = bench::record_gemm_calls([&] { losses = hand_run(data, options); });
  f.steps = losses.size();
  const double drift = largest_drift(reference, losses);
  if (!(drift <= kLossTolerance))
    throw std::runtime_error(cat("the hand-written ", name, " run's step losses are ", drift,
                                 " (relative) away from the lesson's, over ", kLossTolerance,
                                 ": it no longer does the lesson's work"));
  std::printf("%-7s step losses: the hand-written run within %.1e of the lesson's (relative); last %.6f against %.6f\n",
              name.c_str(), drift, double(losses.back()), double(reference.back()));
  auto lesson_run = [&] { (void)bench::train_lesson(data, options); };
  auto hand = [&] { (void)hand_run(data, options); };
  if (lesson_calls != calls.size())
    throw std::runtime_error(
        cat("the hand-written run makes another number of sgemm calls than the lesson's ", lesson_calls));
  bench::GemmReplay floor(calls);
  for (int r = 0; r < repeats; ++r) {  // in turn: a change in the machine's load falls on all three
    const bench::Timing l = bench::best_timing(1, lesson_run), h = bench::best_timing(1, hand),
                        g = bench::best_timing(1, floor);
    f.lesson = {std::min(f.lesson.wall, l.wall), std::min(f.lesson.cpu, l.cpu)};
    f.by_hand = {std::min(f.by_hand.wall, h.wall), std::min(f.by_hand.cpu, h.cpu)};
    f.floor = {std::min(f.floor.wall, g.wall), std::min(f.floor.cpu, g.cpu)};
    bench::PartSeconds parts{};
    const double wall = bench::best_timing(1, [&] { (void)hand_run(data, options, &parts); }).wall;
    if (r == 0 || wall < f.parts_wall) {
      f.parts = parts;
      f.parts_wall = wall;
    }
  }
  return f;
}

}  // namespace

int run(int argc, char** argv) {
  cxxopts::Options options("bench_lesson_by_hand",
                           "The lesson through the framework, written by hand on the same kernels, and its GEMM "
                           "floor, single thread.");
  options.add_options()("norm", "comma list of runs: none, batch, layer",
                        cxxopts::value<std::string>()->default_value("none,batch,layer"))(
      "repeats", "timed repeats (the best counts)", cxxopts::value<int>()->default_value("5"))(
      "batch-size", "examples per step", cxxopts::value<int64_t>()->default_value("64"))(
      "epochs", "epochs per run", cxxopts::value<int64_t>()->default_value("5"))(
      "data", "directory with digits.csv and the split files",
      cxxopts::value<std::string>()->default_value(MINIDL_DATA_DIR));
  const std::optional<cxxopts::ParseResult> parsed = bench::parse_or_help(options, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& args = *parsed;
  set_num_threads(1);
  const int repeats = bench::at_least(args, "repeats", 1);
  const int64_t batch_size = bench::at_least<int64_t>(args, "batch-size", 1),
                epochs = bench::at_least<int64_t>(args, "epochs", 1);
  const bench::LessonData data = bench::load_lesson_data(args["data"].as<std::string>());
  Figures total{.lesson = {0.0, 0.0}, .by_hand = {0.0, 0.0}, .floor = {0.0, 0.0}};
  std::vector<std::string> names;  // all checked before the first run
  std::stringstream list(args["norm"].as<std::string>());
  for (std::string name; std::getline(list, name, ',');) {
    if (name != "none" && name != "batch" && name != "layer")
      throw UsageError(cat("--norm: the hand-written lesson has none, batch and layer, got \"", name, "\""));
    names.push_back(name);
  }
  for (const std::string& name : names) {
    const bench::LessonRun train{.norm = bench::parse_norm(name), .batch_size = batch_size, .epochs = epochs};
    const Figures f = measure(data, train, name, repeats);
    print(name, f);
    for (auto [sum, part] : {std::pair{&total.lesson, f.lesson}, {&total.by_hand, f.by_hand}, {&total.floor, f.floor}})
      *sum = {sum->wall + part.wall, sum->cpu + part.cpu};
    for (size_t p = 0; p < total.parts.size(); ++p) total.parts[p] += f.parts[p];
    total.parts_wall += f.parts_wall;
    total.steps += f.steps;
  }
  print("lesson", total);
  return 0;
}

int main(int argc, char** argv) {
  return minidl::bench::run_program("bench_lesson_by_hand", [&] { return run(argc, argv); });
}
