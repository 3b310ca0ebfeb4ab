// 6. Running statistics against the population statistics of each BatchNorm layer's input.
#include "experiments/bn_tools.hpp"
#include "experiments/experiments.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

constexpr double kMeanGap = 0.2;             // in standard deviations of the layer's input
constexpr double kAccuracyGap = 0.01;        // validation accuracy, running against population statistics
constexpr double kGapFloor = 0.02;           // the mean gap's margin floor, in sd
constexpr double kOneExample = 1.0 / 360.0;  // the accuracy difference's floor: one validation example

struct Momentum {
  std::string label;
  std::optional<double> value;
};
std::vector<Momentum> momenta() { return {{"0.1", 0.1}, {"0.01", 0.01}, {"0.5", 0.5}, {"None", std::nullopt}}; }

class RunningStats : public Experiment {
 public:
  RunningStats()
      : Experiment({"running_stats", "Running statistics versus the population",
                    "PyTorch tracks the batch statistics as exponential running averages; recomputing them over the "
                    "whole training set after training (as D2L does) describes the goal those averages approximate",
                    "study guide, \"Focus on\"; HOML on momentum"}) {}
  std::string setup(const Settings& s) const override {
    return cat("The lesson's BatchNorm network trained (", lesson_training(s).epochs,
               " epoch(s)) with BatchNorm momentum 0.1 (PyTorch's default, the weight of the new batch), 0.01, 0.5 "
               "and None (a cumulative average). Then, layer by layer in eval mode, the mean and unbiased variance "
               "of each BatchNorm layer's input over the whole training split with the trained weights (each "
               "layer's population statistics replacing its running ones before the next layer is measured). "
               "Mean gap: |running_mean - population mean| / population sd; variance gap: |running_var / "
               "population var - 1|; both averaged over the 8 layers and 64 channels.");
  }
  std::string rule() const override {
    return cat("(a) with momentum 0.1 the mean gap, averaged over seeds, is below ", kMeanGap,
               " sd; (b) with momentum 0.1 the validation accuracy with the running statistics minus that with the "
               "population statistics, seed by seed, is on average between -",
               kAccuracyGap, " and ", kAccuracyGap, ". Held: both; held partly: one; did not hold: neither.",
               margin_rule(cat(kGapFloor, " sd for the gap and ", fixed(kOneExample, 4),
                               " (one validation example) for the accuracy difference")));
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (const Momentum& m : momenta())
      append(jobs, seed_jobs(c.settings.seeds, double(lesson_training(c.settings).epochs) * 1437.0 * 8.0 * 1.3,
                             [&c, m](uint64_t seed) { return measure(c, m, seed); }));
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    const auto def = where(records, {{"momentum", "0.1"}});
    const Comparison gap = compare_to_threshold(values_of(def, "mean_gap"), kMeanGap, kGapFloor);
    // Running minus population accuracy, seed by seed: within the band when below its top and above its bottom.
    std::vector<double> lead;
    for (const Record& r : def) lead.push_back(r.num("val_accuracy") - r.num("val_accuracy_population"));
    const Comparison top = compare_to_threshold(lead, kAccuracyGap, kOneExample),
                     bottom = compare_to_threshold(lead, -kAccuracyGap, kOneExample);
    const Truth close = below(gap), same = all_of({below(top), above(bottom)});
    return {verdict_of({close, same}),
            cat("With momentum 0.1 the mean gap is ", comparison_text(gap), " sd (",
                truth_text(close, "close", "not close"),
                ") and the accuracy with running statistics minus that "
                "with population ones ",
                comparison_text(top), " (", truth_text(same, "the same", "not the same"), ").")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<double>> bars;
    std::vector<std::string> labels;
    for (const Momentum& m : momenta()) {
      const auto mine = where(records, {{"momentum", m.label}});
      const lesson::Spread mean_gap = spread(mine, "mean_gap"), var_gap = spread(mine, "var_gap");
      rows.push_back({m.label, mean_range(mean_gap), mean_range(var_gap), mean_range(spread(mine, "val_accuracy")),
                      mean_range(spread(mine, "val_accuracy_population"))});
      bars.push_back(
          {double(bars.size()), mean_gap.mean, mean_gap.min, mean_gap.max, var_gap.mean, var_gap.min, var_gap.max});
      labels.push_back("momentum " + m.label);
    }
    std::string table = "Mean [min, max] over seeds:\n\n" +
                        markdown_table({"momentum", "mean gap (sd)", "variance gap", "val accuracy, running stats",
                                        "val accuracy, population stats"},
                                       rows);
    const std::string script =
        datablock("gap", bars) +
        cat("set title 'Running statistics against the population statistics of each BatchNorm input'\n"
            "set style fill solid 0.6\nset boxwidth 0.35\nset ylabel 'gap (mean over layers and channels)'\n"
            "set yrange [0:*]\nset xtics (",
            xtics(labels),
            ")\nset key top left\nplot $gap using ($1-0.18):2 with boxes title 'mean gap (sd)', "
            "$gap using ($1-0.18):2:3:4 with yerrorbars lc 'black' pt 0 notitle, "
            "$gap using ($1+0.18):5 with boxes title 'variance gap (relative)', "
            "$gap using ($1+0.18):5:6:7 with yerrorbars lc 'black' pt 0 notitle\n");
    return {table, {draw_plot(s.out_dir, "running_stats.png", script, 900, 480)}};
  }

 private:
  static Record measure(const Context& c, const Momentum& m, uint64_t seed) {
    lesson::TrainOptions o = lesson_run(c.settings, NormKind::Batch, seed);
    o.net.bn_momentum = m.value;
    const lesson::RunResult run = lesson::train_run(c.data, o);
    if (!run.ok()) throw Error(*run.failure);
    auto model = copy_model(*run.model, NormKind::Batch, o.net);
    model->eval();
    NoGradGuard no_grad;
    double mean_gap = 0.0, var_gap = 0.0;
    int64_t count = 0;
    Tensor h = c.data.X_train;  // (1437, 64)
    for (size_t i = 0; i < model->size(); ++i) {
      if (auto* bn = dynamic_cast<nn::BatchNormBase*>((*model)[i].get())) {
        const int64_t n = h.size(0), channels = h.size(1);
        for (int64_t ch = 0; ch < channels; ++ch) {
          double sum = 0.0, squares = 0.0;
          for (int64_t r = 0; r < n; ++r) sum += h.data()[r * channels + ch];
          const double mean = sum / double(n);
          for (int64_t r = 0; r < n; ++r) squares += std::pow(h.data()[r * channels + ch] - mean, 2);
          const double var = squares / double(n - 1);
          mean_gap += std::fabs(bn->running_mean.data()[ch] - mean) / std::sqrt(var + 1e-5);
          var_gap += std::fabs(bn->running_var.data()[ch] / (var + 1e-12) - 1.0);
          ++count;
          bn->running_mean.data()[ch] = float(mean);
          bn->running_var.data()[ch] = float(var);
        }
      }
      h = (*(*model)[i])(h);
    }
    const double population_accuracy = predictions((*model)(c.data.X_val), c.data.y_val).accuracy;
    return Record()
        .set("momentum", m.label)
        .set("seed", double(seed))
        .set("mean_gap", mean_gap / double(count))
        .set("var_gap", var_gap / double(count))
        .set("val_accuracy", double(run.val_accuracy))
        .set("val_accuracy_population", population_accuracy);
  }
};

}  // namespace

std::shared_ptr<const Experiment> running_stats_experiment() { return std::make_shared<RunningStats>(); }

}  // namespace minidl::lab
