// 1. Depth: where the network without normalization stops learning, and whether a norm fails.
#include "experiments/experiments.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

constexpr double kStuckLoss = 2.0;  // ln 10 = 2.303 is guessing; below 2.0 it has learned something
// Five times chance, far from both sides of the claim: the network without a norm sits at
// chance (0.1) and the norms at 0.8 to 0.96. At 0.8 the line cut through GroupNorm's seeds
// (0.62 to 0.96 at depth 8), so the last bits of the BLAS kernel decided the verdict.
constexpr double kLearnedAccuracy = 0.5;
constexpr double kGuessLoss = 2.302585, kChance = 0.1;  // what a diverged run counts as

std::vector<int64_t> depths(const Settings& s) {
  return s.quick ? std::vector<int64_t>{2, 8} : std::vector<int64_t>{2, 4, 8, 16, 32};
}

class Depth : public Experiment {
 public:
  Depth()
      : Experiment({"depth", "Depth",
                    "without normalization the deep tanh network has not started learning after 5 epochs (its loss "
                    "stays near ln 10 = 2.3); with a norm layer it learns quickly",
                    "lesson, \"A network that only trains with it\""}) {}
  std::string setup(const Settings& s) const override {
    return cat("The lesson's training (SGD lr 0.05, batch 64, ", lesson_training(s).epochs, " epoch(s)) at depth ",
               joined(depths(s)), " x none / batch / layer / rms / group (GroupNorm 8 groups).");
  }
  std::string rule() const override {
    return cat(
        "at the lesson's depth 8, the network without a norm is \"stuck\" when its mean training loss over seeds "
        "is above ",
        kStuckLoss, ", and a norm \"learns\" when its mean validation accuracy is above ", kLearnedAccuracy,
        " (a diverged run counting as loss ln 10 and accuracy 0.1). Held: none stuck and every norm learns; held "
        "partly: one of the two; did not hold: neither. The table also answers where none stops learning (the "
        "smallest depth it is stuck at) and whether a norm fails (does not surely learn) at the largest depth.",
        margin_rule(cat(kLossFloor, " of loss and ", kAccuracyFloor, " of accuracy")));
  }
  std::vector<Job> plan(const Context& c) const override {
    const std::vector<int64_t> grid = depths(c.settings);
    return grid_jobs(c, {}, "depth", {grid.begin(), grid.end()}, all_norms(), c.settings.seeds,
                     [](lesson::TrainOptions& o, double depth) { o.net.depth = int64_t(depth); });
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    const int64_t lesson_depth = 8, deepest = depths(s).back();
    const Truth stuck = above(loss_without_norm(records, lesson_depth));
    std::vector<Truth> learning;
    std::string accuracies;
    for (NormKind norm : all_norms())
      if (norm != NormKind::None) {
        const Comparison c = accuracy(records, lesson_depth, norm);
        learning.push_back(above(c));
        accuracies += cat(accuracies.empty() ? "" : ", ", lesson::display_name(norm), " ", comparison_text(c));
      }
    std::string first_stuck = "at no depth tried";
    for (int64_t depth : depths(s))
      if (above(loss_without_norm(records, depth)) == Truth::Yes) {
        first_stuck = cat("from depth ", depth);
        break;
      }
    std::string failing;
    for (NormKind norm : all_norms())
      if (norm != NormKind::None && above(accuracy(records, deepest, norm)) != Truth::Yes)
        failing += (failing.empty() ? "" : ", ") + lesson::display_name(norm);
    return {verdict_of({stuck, all_of(learning)}),
            cat("At depth 8 the network without a norm ends at a mean training loss of ",
                comparison_text(loss_without_norm(records, lesson_depth)), " (",
                truth_text(stuck, "stuck", "not stuck"), "); mean validation accuracy: ", accuracies, " (",
                truth_text(all_of(learning), "every norm learns", "not every norm learns"),
                "). Without a norm the network is stuck ", first_stuck, ". At depth ", deepest, ", ",
                failing.empty() ? "every norm still learns" : "not surely learning: " + failing, ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<double>> loss_rows, acc_rows;
    for (int64_t depth : depths(s)) {
      const auto at_depth = where_num(records, "depth", double(depth));
      std::vector<std::string> row{std::to_string(depth)};
      std::vector<double> loss_row{double(depth)}, acc_row{double(depth)};
      for (NormKind norm : all_norms()) {
        const auto runs = of_norm(at_depth, norm);
        const lesson::Spread loss = spread(runs, "train_loss"), acc = spread(runs, "val_accuracy");
        row.push_back(mean_range(loss) + " / " + mean_range(acc));
        loss_row.insert(loss_row.end(), {loss.mean, loss.min, loss.max});
        acc_row.insert(acc_row.end(), {acc.mean, acc.min, acc.max});
      }
      rows.push_back(row);
      loss_rows.push_back(loss_row);
      acc_rows.push_back(acc_row);
    }
    std::vector<std::string> header{"depth"};
    for (NormKind norm : all_norms()) header.push_back(lesson::display_name(norm));
    return {"Training loss / validation accuracy, mean [min, max] over seeds:\n\n" + markdown_table(header, rows),
            {draw_panels(s.out_dir, "depth.png",
                         "Depth: final training loss and validation accuracy (mean, range over seeds)",
                         picture(loss_rows, acc_rows))}};
  }

 private:
  static std::vector<Record> runs(const std::vector<Record>& records, int64_t depth, NormKind norm) {
    return of_norm(where_num(records, "depth", double(depth)), norm);
  }
  static Comparison loss_without_norm(const std::vector<Record>& records, int64_t depth) {
    return compare_to_threshold(
        values_counting_failures(runs(records, depth, NormKind::None), "train_loss", kGuessLoss), kStuckLoss,
        kLossFloor);
  }
  static Comparison accuracy(const std::vector<Record>& records, int64_t depth, NormKind norm) {
    return accuracy_against(runs(records, depth, norm), kLearnedAccuracy, kChance);
  }
  static std::string picture(const std::vector<std::vector<double>>& loss,
                             const std::vector<std::vector<double>>& acc) {
    std::string script = datablock("loss", loss) + datablock("acc", acc) +
                         "set logscale x 2\nset xlabel 'depth (Linear + norm + Tanh blocks)'\n"
                         "set key bottom right\nset xrange [1.5:45]\n";
    auto series = [](const std::string& block) {
      std::string plots;
      const auto norms = all_norms();
      for (size_t i = 0; i < norms.size(); ++i) {
        const size_t col = 2 + 3 * i;
        plots += cat(i ? ", " : "plot ", "$", block, " using ($1*", 1.0 + 0.04 * double(i), "):", col, ":", col + 1,
                     ":", col + 2, " ", norm_line(norms[i]));
      }
      return plots + "\n";
    };
    script +=
        "set title 'training loss (ln 10 = 2.303 is guessing)'\nset ylabel 'loss'\nset key top left\n" + series("loss");
    script += "set title 'validation accuracy'\nset ylabel 'accuracy'\nset yrange [0:1]\nset key bottom left\n" +
              series("acc");
    return script;
  }
};

}  // namespace

std::shared_ptr<const Experiment> depth_experiment() { return std::make_shared<Depth>(); }

}  // namespace minidl::lab
