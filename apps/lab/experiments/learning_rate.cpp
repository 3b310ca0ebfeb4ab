// 2. Learning rate: "norm layers also let you use larger learning rates".
#include "experiments/experiments.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

constexpr double kTarget = 0.8;  // the validation accuracy an lr must still reach

std::vector<double> grid(const Settings& s) {
  if (s.quick) return {0.05, 1.0};
  return {0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0};
}

std::vector<Record> runs(const std::vector<Record>& records, NormKind norm, double lr) {
  return where_num(of_norm(records, norm), "lr", lr);
}

// Mean validation accuracy over seeds, a diverged run counting as 0.
double accuracy(const std::vector<Record>& records, NormKind norm, double lr) {
  return spread_counting_failures(runs(records, norm, lr), "val_accuracy", 0.0).mean;
}

// The largest lr of the grid whose mean accuracy is above kTarget (0 when none): at least the
// largest surely above, at most the largest not surely below.
Bounds largest_reaching(const std::vector<Record>& records, NormKind norm, const Settings& s) {
  Bounds largest;
  for (double lr : grid(s)) {
    const Truth reaches = above(accuracy_against(runs(records, norm, lr), kTarget, 0.0));
    if (reaches == Truth::Yes) largest.low = lr;
    if (reaches != Truth::No) largest.high = lr;
  }
  return largest;
}

std::string lr_text(const Bounds& b) {
  if (b.low == b.high) return b.low > 0 ? plain(b.low) : "none";
  return cat(b.low > 0 ? plain(b.low) : "none", " to ", plain(b.high));
}

class LearningRate : public Experiment {
 public:
  LearningRate()
      : Experiment({"learning_rate", "Learning rate", "norm layers also let you use larger learning rates",
                    "lesson, \"A network that only trains with it\""}) {}
  std::string setup(const Settings& s) const override {
    return cat("The lesson's network and training (", lesson_training(s).epochs, " epoch(s), batch 64) with SGD lr ",
               joined(grid(s)), " x the five norms.");
  }
  std::string rule() const override {
    return cat(
        "per norm, the largest lr of the grid whose mean validation accuracy over seeds (a diverged run counts "
        "as 0) is above ",
        kTarget,
        " (0 when none is); an lr whose mean is within its margin makes it a range. Held: every norm's largest "
        "such lr is above that of the network without a norm; held partly: some norms' are; did not hold: none "
        "is.",
        margin_rule(cat(kAccuracyFloor, " of accuracy")));
  }
  std::vector<Job> plan(const Context& c) const override {
    return grid_jobs(c, {}, "lr", grid(c.settings), all_norms(), c.settings.seeds,
                     [](lesson::TrainOptions& o, double lr) { o.lr = lr; });
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    const Bounds none = largest_reaching(records, NormKind::None, s);
    std::vector<Truth> better;
    std::string summary = cat(lesson::display_name(NormKind::None), ": ", lr_text(none));
    for (NormKind norm : all_norms())
      if (norm != NormKind::None) {
        const Bounds largest = largest_reaching(records, norm, s);
        better.push_back(greater(largest, none));
        summary += cat("; ", lesson::display_name(norm), ": ", lr_text(largest));
      }
    return {verdict_of(better), cat("Largest lr whose mean accuracy is above ", kTarget, ": ", summary, ". ",
                                    count_text(better, "surely go above the network without one"), ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    const std::vector<NormKind> norms = all_norms();
    GridTable table = grid_table(records, norms, {"lr", grid(s), "val_accuracy", [](const std::vector<Record>& at) {
                                                    return mean_range(spread(at, "val_accuracy"), 2) +
                                                           diverged_note(at.size() - count_status(at, "ok"));
                                                  }});
    for (size_t i = 0; i < norms.size(); ++i) {
      double best_lr = grid(s).front(), best = -1.0;
      for (double lr : grid(s)) {
        const double acc = accuracy(records, norms[i], lr);
        if (acc > best) best = acc, best_lr = lr;
      }
      table.rows[i].push_back(plain(best_lr) + " (" + fixed(best, 3) + ")");
      table.rows[i].push_back(lr_text(largest_reaching(records, norms[i], s)));
    }
    const std::string script =
        "set title 'Learning rate: validation accuracy after training (mean and range over seeds)'\n"
        "set logscale x\nset xlabel 'SGD learning rate'\nset ylabel 'validation accuracy'\nset yrange [0:1]\n"
        "set key bottom left\n" +
        table.blocks +
        cat("set arrow from graph 0, first ", kTarget, " to graph 1, first ", kTarget, " nohead dt 2 lc 'gray'\n") +
        table.plot + "\n";
    std::vector<std::string> header = grid_header("norm", "lr ", grid(s));
    header.push_back("best lr (accuracy)");
    header.push_back(cat("largest lr reaching ", kTarget));
    const std::string text =
        "Validation accuracy, mean [min, max] over the seeds that finished:\n\n" + markdown_table(header, table.rows);
    return {text, {draw_plot(s.out_dir, "learning_rate.png", script, 900, 520)}};
  }
};

}  // namespace

std::shared_ptr<const Experiment> learning_rate_experiment() { return std::make_shared<LearningRate>(); }

}  // namespace minidl::lab
