// 3. Starting weights: "they make training less sensitive to the starting weights".
#include "experiments/experiments.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

std::vector<double> scales(const Settings& s) {
  if (s.quick) return {0.5, 2.0};
  return {0.25, 0.5, 1.0, 2.0, 4.0};
}

/// Three times --seeds (those given, then the ones after the largest); --quick keeps its one.
/// A range over five scales of chaotic runs is heavy-tailed: over five seeds GroupNorm's
/// mean difference sat within its margin of 0 under one BLAS kernel and above it under the
/// others; over fifteen the margins settle it under every kernel (docs/lab/README.md).
std::vector<uint64_t> seeds(const Settings& s) {
  std::vector<uint64_t> out = s.seeds;
  if (s.quick || out.empty()) return out;
  uint64_t next = *std::max_element(out.begin(), out.end()) + 1;
  while (out.size() < 3 * s.seeds.size()) out.push_back(next++);
  return out;
}

// Per seed of the norm, the range (max - min) of the final training loss over the scales, a
// diverged run counting as a loss of ln 10 (guessing).
std::vector<Record> sensitivities(const std::vector<Record>& records, NormKind norm) {
  std::vector<Record> out;
  const std::vector<Record> mine = of_norm(records, norm);
  for (const Record& r : mine) {
    if (!where_num(out, "seed", r.num("seed")).empty()) continue;
    double low = INFINITY, high = -INFINITY;
    for (const Record& run : where_num(mine, "seed", r.num("seed"))) {
      const double loss = std::isnan(run.num("train_loss")) ? std::log(10.0) : run.num("train_loss");
      low = std::min(low, loss);
      high = std::max(high, loss);
    }
    out.push_back(Record().set("seed", r.num("seed")).set("range", high - low));
  }
  return out;
}

class InitScale : public Experiment {
 public:
  InitScale()
      : Experiment({"init_scale", "Starting weights",
                    "norm layers make training less sensitive to the starting weights",
                    "lesson, \"A network that only trains with it\""}) {}
  std::string setup(const Settings& s) const override {
    return cat("The lesson's network with every Linear's initial weight multiplied by ", joined(scales(s)),
               " (biases as drawn), x the five norms; the lesson's training (", lesson_training(s).epochs,
               " epoch(s)).");
  }
  std::string rule() const override {
    return cat(
        "per norm and seed, the sensitivity is the range (max - min) of the final training loss over the scales, a "
        "diverged run counting as a loss of 2.303 (guessing). A norm is less sensitive than the network without "
        "one when the mean over seeds of the difference of their ranges (the network without a norm's minus the "
        "norm's, seed by seed) is above 0. Held: every norm is less sensitive; held partly: some are; did not "
        "hold: none is.",
        margin_rule(cat(kLossFloor, " of loss")));
  }
  std::vector<uint64_t> seeds_used(const Settings& s) const override { return seeds(s); }
  std::vector<Job> plan(const Context& c) const override {
    return grid_jobs(c, {}, "init_scale", scales(c.settings), all_norms(), seeds(c.settings),
                     [](lesson::TrainOptions& o, double scale) { o.net.init_scale = scale; });
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    const auto none = sensitivities(records, NormKind::None);
    std::vector<Truth> less;
    std::string summary;
    for (NormKind norm : all_norms())
      if (norm != NormKind::None) {
        const Comparison c =
            compare_to_threshold(paired_differences(none, sensitivities(records, norm), "range", 0.0), 0.0, kLossFloor);
        less.push_back(above(c));
        summary += cat(summary.empty() ? "" : ", ", lesson::display_name(norm), " ", comparison_text(c));
      }
    return {verdict_of(less),
            cat("Range of the final training loss over the scales, the network without a norm's minus the norm's, "
                "mean over seeds: ",
                summary, "; ", count_text(less, "are surely less sensitive than the network without one"), ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    const std::vector<NormKind> norms = all_norms();
    GridTable table = grid_table(records, norms, {"init_scale", scales(s), "train_loss", [](const auto& at) {
                                                    return mean_range(spread(at, "train_loss"));
                                                  }});
    for (size_t i = 0; i < norms.size(); ++i)
      table.rows[i].push_back(mean_range(spread(sensitivities(records, norms[i]), "range")));
    const std::string script =
        "set title 'Starting weights: final training loss by initial weight scale (mean and range over seeds)'\n"
        "set logscale x 2\nset xlabel 'initial weight scale'\nset ylabel 'training loss'\nset key top left\n"
        "set xrange [0.2:5]\n" +
        table.blocks + table.plot + "\n";
    std::vector<std::string> header = grid_header("norm", "scale ", scales(s));
    header.push_back("range over the scales");
    const std::string text =
        "Final training loss, mean [min, max] over seeds, and its range over the scales per seed (mean [min, "
        "max]):\n\n" +
        markdown_table(header, table.rows);
    return {text, {draw_plot(s.out_dir, "init_scale.png", script, 900, 520)}};
  }
};

}  // namespace

std::shared_ptr<const Experiment> init_scale_experiment() { return std::make_shared<InitScale>(); }

}  // namespace minidl::lab
