// 2. Learning rate: "norm layers also let you use larger learning rates".
#include <cmath>

#include "experiments.hpp"
#include "minidl/tensor/error.hpp"
#include "tools.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

constexpr double kTarget = 0.8;  // the validation accuracy an lr must still reach

std::vector<double> grid(const Settings& s) {
  if (s.quick) return {0.05, 1.0};
  return {0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0};
}

// Mean validation accuracy over seeds, a diverged run counting as 0.
double accuracy(const std::vector<Record>& records, NormKind norm, double lr) {
  return mean_counting_failures(where_num(where(records, {{"norm", lesson::short_name(norm)}}), "lr", lr),
                                "val_accuracy", 0.0);
}

class LearningRate : public Experiment {
 public:
  std::string name() const override { return "learning_rate"; }
  std::string title() const override { return "Learning rate"; }
  std::string claim() const override { return "norm layers also let you use larger learning rates"; }
  std::string source() const override { return "lesson, \"A network that only trains with it\""; }
  std::string setup(const Settings& s) const override {
    std::string list;
    for (double lr : grid(s)) list += (list.empty() ? "" : ", ") + plain(lr);
    return cat("The lesson's network and training (", lesson_training(s).epochs, " epoch(s), batch 64) with SGD lr ",
               list, " x the five norms.");
  }
  std::string rule() const override {
    return cat(
        "per norm, the largest lr of the grid whose mean validation accuracy over seeds (a diverged run counts "
        "as 0) reaches ",
        kTarget,
        " (0 when none does). Held: every norm's largest such lr is above that of the network "
        "without a norm; held partly: some norms' are; did not hold: none is.");
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (double lr : grid(c.settings))
      for (NormKind norm : all_norms())
        for (uint64_t seed : c.settings.seeds) {
          lesson::TrainOptions o = lesson_training(c.settings);
          o.norm = norm;
          o.seed = seed;
          o.lr = lr;
          jobs.push_back(train_job(c, o, Record().set("lr", lr)));
        }
    return jobs;
  }
  Outcome judge(const std::vector<Record>& records, const Settings& s) const override {
    Outcome out;
    std::vector<std::vector<std::string>> rows;
    std::string script = plot_header("learning_rate.png", 900, 520);
    script +=
        "set title 'Learning rate: validation accuracy after training (mean and range over seeds)'\n"
        "set logscale x\nset xlabel 'SGD learning rate'\nset ylabel 'validation accuracy'\nset yrange [0:1]\n"
        "set key bottom left\n";
    std::string plots;
    double none_largest = 0.0;
    size_t better = 0;
    std::string summary;
    const auto norms = all_norms();
    for (size_t i = 0; i < norms.size(); ++i) {
      const NormKind norm = norms[i];
      const auto mine = where(records, {{"norm", lesson::short_name(norm)}});
      double best_lr = grid(s).front(), best = -1.0, largest = 0.0;
      for (double lr : grid(s)) {
        const double acc = accuracy(records, norm, lr);
        if (acc > best) best = acc, best_lr = lr;
        if (acc >= kTarget) largest = lr;
      }
      std::vector<std::string> row{lesson::display_name(norm)};
      for (double lr : grid(s)) {
        const auto at = where_num(mine, "lr", lr);
        const size_t diverged = at.size() - count_status(at, "ok");
        row.push_back(mean_range(spread(at, "val_accuracy"), 2) + (diverged ? cat(" (", diverged, " diverged)") : ""));
      }
      row.push_back(plain(best_lr) + " (" + fixed(best, 3) + ")");
      row.push_back(largest > 0 ? plain(largest) : "none");
      rows.push_back(row);
      if (norm == NormKind::None) none_largest = largest;
      else if (largest > none_largest) ++better;
      summary += cat(i ? "; " : "", lesson::display_name(norm), " ", largest > 0 ? plain(largest) : "none");
      script += series_block(cat("n", i), mine, "lr", grid(s), "val_accuracy");
      plots += cat(i ? ", " : "plot ", "$n", i, " using ($1*", 1.0 + 0.03 * double(i), "):2:3:4 ", norm_line(norm));
    }
    script +=
        cat("set arrow from graph 0, first ", kTarget, " to graph 1, first ", kTarget, " nohead dt 2 lc 'gray'\n") +
        plots + "\n";
    draw(s.out_dir, "learning_rate.png", script);
    out.pictures = {"learning_rate.png"};
    std::vector<std::string> header{"norm"};
    for (double lr : grid(s)) header.push_back("lr " + plain(lr));
    header.push_back("best lr (accuracy)");
    header.push_back(cat("largest lr reaching ", kTarget));
    out.table = "Validation accuracy, mean [min, max] over the seeds that finished:\n\n" + markdown_table(header, rows);
    const size_t norms_count = norms.size() - 1;
    out.verdict = better == norms_count ? Verdict::Held : better > 0 ? Verdict::HeldPartly : Verdict::DidNotHold;
    out.why = cat("Largest lr reaching ", kTarget, ": ", summary, ". ", better, " of ", norms_count,
                  " norms go above the network without one.");
    return out;
  }
};

}  // namespace

std::shared_ptr<const Experiment> learning_rate_experiment() { return std::make_shared<LearningRate>(); }

}  // namespace minidl::lab
