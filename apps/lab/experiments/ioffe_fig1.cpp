// BatchNorm's own Figure 1 (Ioffe and Szegedy 2015, Sec. 4.1): a sigmoid MLP with and without
// BatchNorm, its validation accuracy and one last-layer sigmoid's input distribution over training.
#include "experiments/bn_tools.hpp"
#include "experiments/experiments.hpp"
#include "minidl/data/data_loader.hpp"
#include "minidl/nn/linear.hpp"
#include "minidl/nn/norm/batch_norm.hpp"
#include "minidl/ops/cross_entropy.hpp"
#include "minidl/ops/unary.hpp"
#include "minidl/optim/sgd.hpp"

namespace minidl::lab {

namespace {

constexpr int64_t kHidden = 100;     // units of each of the 3 hidden layers, as the paper's
constexpr int64_t kBatch = 60;       // the paper's batch
constexpr double kLr = 1.0;          // SGD, the same for both networks
constexpr int64_t kUnit = 0;         // the watched unit of the last hidden layer, fixed before training
constexpr double kShiftFloor = 0.1;  // of the sigmoid's input: moves its output by at most 0.025

int64_t steps(const Settings& s) { return s.quick ? 300 : 3000; }
int64_t every(const Settings& s) { return steps(s) / 30; }
std::vector<std::string> variants() { return {"none", "batch"}; }
std::string variant_name(const std::string& v) { return v == "batch" ? "with BatchNorm" : "without BatchNorm"; }

// The paper's sigmoid as a layer of this experiment's network.
class Sigmoid : public nn::Module {
 public:
  Tensor forward(const Tensor& input) override { return sigmoid(input); }
  std::string type_name() const override { return "Sigmoid"; }
};

// 3 x [Linear(100), BatchNorm1d (with BN), Sigmoid], Linear(10), PyTorch's default init.
std::shared_ptr<nn::Sequential> sigmoid_net(bool batch_norm, Generator& gen) {
  auto net = std::make_shared<nn::Sequential>();
  int64_t in = 64;
  for (int layer = 0; layer < 3; ++layer) {
    net->push_back(std::make_shared<nn::Linear>(in, kHidden, gen));
    if (batch_norm) net->push_back(std::make_shared<nn::BatchNorm1d>(kHidden));
    net->push_back(std::make_shared<Sigmoid>());
    in = kHidden;
  }
  net->push_back(std::make_shared<nn::Linear>(in, 10, gen));
  return net;
}

// The p-th percentile by linear interpolation between order statistics (numpy's default).
double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const double at = p / 100.0 * double(values.size() - 1);
  const size_t low = size_t(std::floor(at));
  const size_t high = std::min(low + 1, values.size() - 1);
  return values[low] + (at - double(low)) * (values[high] - values[low]);
}

// The watched unit's input to the last Sigmoid over the whole validation split as one batch in
// training mode (BatchNorm on that batch's statistics; its running statistics left as they were).
std::vector<double> watched_inputs(nn::Sequential& net, const Tensor& X) {
  NoGradGuard no_grad;
  BufferGuard keep_running_stats(net);
  net.train();
  Tensor h = X;
  for (size_t i = 0; i + 2 < net.size(); ++i) h = (*net[i])(h);  // (N, 100): up to the last Sigmoid
  std::vector<double> unit;
  for (int64_t row = 0; row < h.size(0); ++row) unit.push_back(h.data()[row * kHidden + kUnit]);
  return unit;
}

Record probe(nn::Sequential& net, const data::DigitsSplit& data, const Record& keys, int64_t step) {
  const std::vector<double> unit = watched_inputs(net, data.X_val);
  net.eval();
  NoGradGuard no_grad;
  Record r = keys;
  r.set("step", double(step)).set("val_accuracy", predictions(net(data.X_val), data.y_val).accuracy);
  for (double p : {15.0, 50.0, 85.0}) r.set(cat("p", p), percentile(unit, p));
  return r;
}

std::vector<Record> train_and_watch(const Context& c, const std::string& variant, uint64_t seed) {
  Generator gen(seed);
  auto net = sigmoid_net(variant == "batch", gen);
  optim::SGD sgd(net->parameters(), {.lr = kLr});
  data::DataLoader loader(c.data.X_train, c.data.y_train, {.batch_size = kBatch, .shuffle = true, .seed = seed});
  const Record keys = Record().set("variant", variant).set("seed", double(seed));
  std::vector<Record> records{probe(*net, c.data, keys, 0)};
  for (int64_t step = 0; step < steps(c.settings);) {
    net->train();
    for (const data::Batch& batch : loader.epoch()) {
      sgd.zero_grad();
      cross_entropy((*net)(batch.inputs), batch.targets).backward();
      sgd.step();
      if (++step % every(c.settings) == 0) records.push_back(probe(*net, c.data, keys, step));
      if (step == steps(c.settings)) break;
    }
  }
  return records;
}

// Per run: its validation accuracy averaged over the curve, and how far the percentiles moved
// (each percentile's max - min over the curve, averaged over the three).
struct Watched {
  double mean_accuracy, final_accuracy, shift;
};
Watched watched(const std::vector<Record>& run) {
  Watched w{spread(run, "val_accuracy").mean, run.back().num("val_accuracy"), 0.0};
  for (const char* p : {"p15", "p50", "p85"}) {
    const lesson::Spread s = spread(run, p);
    w.shift += (s.max - s.min) / 3.0;
  }
  return w;
}

// One summary record per run (variant, seed, mean_accuracy, final_accuracy, shift).
std::vector<Record> summaries(const std::vector<Record>& records, const std::vector<uint64_t>& seeds) {
  std::vector<Record> out;
  for (const std::string& v : variants())
    for (uint64_t seed : seeds) {
      const auto run = where_num(where(records, {{"variant", v}}), "seed", double(seed));
      if (run.empty()) continue;
      const Watched w = watched(run);
      out.push_back(Record()
                        .set("variant", v)
                        .set("seed", double(seed))
                        .set("mean_accuracy", w.mean_accuracy)
                        .set("final_accuracy", w.final_accuracy)
                        .set("shift", w.shift));
    }
  return out;
}

class IoffeFig1 : public Experiment {
 public:
  IoffeFig1()
      : Experiment({"ioffe_fig1", "BatchNorm's Figure 1: a sigmoid MLP with and without BatchNorm",
                    "with BatchNorm the network trains faster and reaches higher accuracy, and the distribution of a "
                    "last-layer sigmoid's input is much more stable over training (without it the distribution "
                    "changes in mean and variance)",
                    "Ioffe and Szegedy 2015, \"Batch Normalization\", Sec. 4.1 and Fig. 1"}) {}
  std::string setup(const Settings& s) const override {
    return cat("The paper's network on the digits: 3 hidden layers of ", kHidden,
               " sigmoid units, then Linear(10), PyTorch's default init; with BatchNorm1d before each sigmoid and "
               "without. SGD lr ",
               kLr, ", batch ", kBatch, ", ", steps(s),
               " steps (the paper: 50000 steps of 60 on MNIST's 60000 examples; here 125 epochs of the digits' "
               "1437, within which lr 1 brings the network without BatchNorm to about 0.95, as the paper's gets "
               "close to BatchNorm's accuracy late in Fig. 1a; from lr 2 on, BatchNorm's learnt scale and shift move "
               "the watched input about as much as without it). Every ",
               every(s),
               " steps: the validation accuracy (eval mode) and the 15th, 50th and 85th percentiles of the input to "
               "unit ",
               kUnit,
               " (fixed before training) of the last sigmoid layer over the validation split as one batch "
               "(training mode; BatchNorm's running statistics left untouched).");
  }
  std::string rule() const override {
    return cat(
        "per seed, \"faster\" is the validation accuracy averaged over the recorded points (the area under Fig. 1a's "
        "curve) with BatchNorm minus without; \"stable\" is the movement of the watched input's percentiles (each "
        "percentile's max - min over the recorded points, averaged over the three) without BatchNorm minus with it. "
        "Each difference's mean over seeds must be above 0. Held: both; held partly: one; did not hold: neither.",
        margin_rule(cat(kAccuracyFloor, " of accuracy and ", kShiftFloor, " of the sigmoid's input")));
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (const std::string& v : variants())
      append(jobs, seed_jobs(c.settings.seeds, double(steps(c.settings) * kBatch * 4),
                             [&c, v](uint64_t seed) { return train_and_watch(c, v, seed); }));
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    const auto runs = summaries(records, s.seeds);
    const auto with = where(runs, {{"variant", "batch"}}), without = where(runs, {{"variant", "none"}});
    const Comparison faster =
        compare_to_threshold(paired_differences(with, without, "mean_accuracy", 0.0), 0.0, kAccuracyFloor);
    const Comparison stable = compare_to_threshold(paired_differences(without, with, "shift", 0.0), 0.0, kShiftFloor);
    return {verdict_of({above(faster), above(stable)}),
            cat("Accuracy over the curve, with minus without BatchNorm: ", comparison_text(faster), " (",
                truth_text(above(faster), "faster", "not faster"),
                "); the percentiles' movement, without minus with: ", comparison_text(stable), " (",
                truth_text(above(stable), "more stable with BatchNorm", "not more stable"), ").")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    const auto runs = summaries(records, s.seeds);
    const int64_t early = steps(s) / 10;
    std::vector<std::vector<std::string>> rows;
    for (const std::string& v : variants()) {
      const auto mine = where(records, {{"variant", v}});
      const auto summary = where(runs, {{"variant", v}});
      rows.push_back({variant_name(v), mean_range(spread(where_num(mine, "step", double(early)), "val_accuracy")),
                      mean_range(spread(summary, "final_accuracy")), mean_range(spread(summary, "mean_accuracy")),
                      mean_range(spread(summary, "shift"))});
    }
    const std::string table = "Mean [min, max] over seeds:\n\n" +
                              markdown_table({"network", cat("val accuracy at step ", early), cat("at step ", steps(s)),
                                              "mean over the curve", "percentiles' movement"},
                                             rows);
    return {table, {draw_picture(records, s)}};
  }

 private:
  static std::string draw_picture(const std::vector<Record>& records, const Settings& s) {
    const double first = double(s.seeds.front());
    std::string accuracy = "set title '(a) validation accuracy, mean over seeds'\nset yrange [0:1]\nplot ";
    std::string blocks;
    for (size_t i = 0; i < variants().size(); ++i) {
      const auto mine = where(records, {{"variant", variants()[i]}});
      std::vector<std::vector<double>> mean_rows, seed_rows;
      for (int64_t step = 0; step <= steps(s); step += every(s)) {
        const auto at = where_num(mine, "step", double(step));
        if (at.empty()) continue;
        mean_rows.push_back({double(step), spread(at, "val_accuracy").mean});
        for (const Record& r : where_num(at, "seed", first))
          seed_rows.push_back({double(step), r.num("p15"), r.num("p50"), r.num("p85")});
      }
      blocks += datablock(cat("a", i), mean_rows) + datablock(cat("p", i), seed_rows);
      accuracy += cat(i ? ", " : "", "$a", i, " using 1:2 with lines lw 2 title '", variant_name(variants()[i]), "'");
    }
    // (b) and (c) on one scale, so their movements compare by eye.
    const auto seed_runs = where_num(records, "seed", first);
    const double low = std::min({spread(seed_runs, "p15").min, spread(seed_runs, "p85").min});
    const double high = std::max({spread(seed_runs, "p15").max, spread(seed_runs, "p85").max});
    std::string script =
        blocks + "set xlabel 'training step'\nset key bottom right\n" + accuracy +
        cat("\nset yrange [", low - 0.5, ":", high + 0.5, "]\nset ylabel 'sigmoid input'\nset key top right\n");
    for (size_t i = 0; i < variants().size(); ++i)
      script += cat("set title '(", char('b' + i), ") ", variant_name(variants()[i]), ": input of unit ", kUnit,
                    ", seed ", plain(first), "'\nplot $p", i,
                    " using 1:2 with lines lw 2 title '15th percentile', '' using 1:3 with lines lw 2 title '50th', "
                    "'' using 1:4 with lines lw 2 title '85th'\n");
    return draw_panels(s.out_dir, "ioffe_fig1.png", "Ioffe and Szegedy's Fig. 1 on the digits", script, 3, 1350, 430);
  }
};

}  // namespace

std::shared_ptr<const Experiment> ioffe_fig1_experiment() { return std::make_shared<IoffeFig1>(); }

}  // namespace minidl::lab
