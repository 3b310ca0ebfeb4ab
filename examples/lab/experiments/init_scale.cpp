// 3. Starting weights: "they make training less sensitive to the starting weights".
#include <algorithm>
#include <cmath>

#include "experiments.hpp"
#include "minidl/tensor/error.hpp"
#include "tools.hpp"

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
  for (const Record& r : where(records, {{"norm", lesson::short_name(norm)}})) {
    if (!where_num(out, "seed", r.num("seed")).empty()) continue;
    double low = INFINITY, high = -INFINITY;
    for (const Record& run : where_num(where(records, {{"norm", lesson::short_name(norm)}}), "seed", r.num("seed"))) {
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
  std::string name() const override { return "init_scale"; }
  std::string title() const override { return "Starting weights"; }
  std::string claim() const override { return "norm layers make training less sensitive to the starting weights"; }
  std::string source() const override { return "lesson, \"A network that only trains with it\""; }
  std::string setup(const Settings& s) const override {
    std::string list;
    for (double k : scales(s)) list += (list.empty() ? "" : ", ") + plain(k);
    return cat("The lesson's network with every Linear's initial weight multiplied by ", list,
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
    std::vector<Job> jobs;
    for (double scale : scales(c.settings))
      for (NormKind norm : all_norms())
        for (uint64_t seed : seeds(c.settings)) {
          lesson::TrainOptions o = lesson_training(c.settings);
          o.norm = norm;
          o.seed = seed;
          o.net.init_scale = scale;
          jobs.push_back(train_job(c, o, Record().set("init_scale", scale)));
        }
    return jobs;
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
                summary, "; ", std::count(less.begin(), less.end(), Truth::Yes), " of ", less.size(),
                " norms are surely less sensitive than the network without one, ",
                std::count(less.begin(), less.end(), Truth::Unsure), " within the margin.")};
  }
  Outcome describe(const std::vector<Record>& records, const Settings& s) const override {
    Outcome out;
    std::vector<std::vector<std::string>> rows;
    std::string script = plot_header("init_scale.png", 900, 520);
    script +=
        "set title 'Starting weights: final training loss by initial weight scale (mean and range over seeds)'\n"
        "set logscale x 2\nset xlabel 'initial weight scale'\nset ylabel 'training loss'\nset key top left\n"
        "set xrange [0.2:5]\n";
    std::string plots;
    const auto norms = all_norms();
    for (size_t i = 0; i < norms.size(); ++i) {
      const auto mine = where(records, {{"norm", lesson::short_name(norms[i])}});
      std::vector<std::string> row{lesson::display_name(norms[i])};
      for (double k : scales(s)) row.push_back(mean_range(spread(where_num(mine, "init_scale", k), "train_loss")));
      row.push_back(mean_range(spread(sensitivities(records, norms[i]), "range")));
      rows.push_back(row);
      script += series_block(cat("n", i), mine, "init_scale", scales(s), "train_loss");
      plots += cat(i ? ", " : "plot ", "$n", i, " using ($1*", 1.0 + 0.03 * double(i), "):2:3:4 ", norm_line(norms[i]));
    }
    draw(s.out_dir, "init_scale.png", script + plots + "\n");
    out.pictures = {"init_scale.png"};
    std::vector<std::string> header{"norm"};
    for (double k : scales(s)) header.push_back("scale " + plain(k));
    header.push_back("range over the scales");
    out.table =
        "Final training loss, mean [min, max] over seeds, and its range over the scales per seed (mean [min, "
        "max]):\n\n" +
        markdown_table(header, rows);
    return out;
  }
};

}  // namespace

std::shared_ptr<const Experiment> init_scale_experiment() { return std::make_shared<InitScale>(); }

}  // namespace minidl::lab
