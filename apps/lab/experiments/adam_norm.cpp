// 13. Adam and normalization: does Adam rescue the lesson's network without a norm layer in
// the lesson's 5 epochs, where SGD leaves it stuck? Uses the trainer's optimizer switch
// (training/trainer_setup.hpp).
#include "experiments/experiments.hpp"
#include "training/trainer_setup.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;
using lesson::OptimizerKind;

constexpr double kLearnedAccuracy = 0.8;  // learned well
constexpr double kSgdLr = 0.05;           // the lesson's

struct Trainer {
  OptimizerKind optimizer;
  double lr;
};

std::vector<Trainer> trainers(const Settings& s) {
  if (s.quick) return {{OptimizerKind::Sgd, kSgdLr}, {OptimizerKind::Adam, 1e-3}};
  return {{OptimizerKind::Sgd, kSgdLr}, {OptimizerKind::Adam, 1e-3}, {OptimizerKind::Adam, 1e-2}};
}

std::vector<NormKind> norms(const Settings& s) {
  if (s.quick) return {NormKind::None, NormKind::Layer};
  return all_norms();
}

std::string trainer_label(const Trainer& t) { return cat(lesson::short_name(t.optimizer), " lr ", plain(t.lr)); }

class AdamNorm : public Experiment {
 public:
  AdamNorm()
      : Experiment({"adam_norm", "Adam and normalization",
                    "an adaptive optimizer does not replace normalization: Adam alone does not make the deep tanh "
                    "network without a norm layer learn in 5 epochs",
                    "a common claim about adaptive optimizers"}) {}
  std::string setup(const Settings& s) const override {
    std::string list;
    for (const Trainer& t : trainers(s)) list += (list.empty() ? "" : ", ") + trainer_label(t);
    return cat("The lesson's network (depth 8, width 64, PyTorch's init) x the norms, trained ",
               lesson_training(s).epochs, " epoch(s) at batch 64 by ", list,
               " (Adam with PyTorch's defaults: betas (0.9, 0.999), eps 1e-8, no weight decay).");
  }
  std::string rule() const override {
    return cat("a network \"learns\" when its mean validation accuracy over seeds is above ", kLearnedAccuracy,
               " (a run that diverged counting as 0.1). Held (Adam does not rescue it): the network without a norm "
               "learns under no Adam learning rate; held partly: it learns under some but not all; did not hold: "
               "under every one. The norms' rows show whether Adam and a norm together do better than either.",
               margin_rule(cat(kAccuracyFloor, " of accuracy")));
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (const Trainer& t : trainers(c.settings))
      append(jobs, grid_jobs(c, Record().set("optimizer", lesson::short_name(t.optimizer)), "lr", {t.lr},
                             norms(c.settings), c.settings.seeds, [&t](lesson::TrainOptions& o, double lr) {
                               o.lr = lr;
                               o.trainer.optimizer = t.optimizer;
                             }));
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<Truth> not_rescued;
    std::string figures;
    for (const Trainer& t : trainers(s)) {
      const Comparison c = accuracy_against(of(records, NormKind::None, t), kLearnedAccuracy, 0.1);
      figures += cat(figures.empty() ? "" : ", ", trainer_label(t), " ", comparison_text(c));
      if (t.optimizer != OptimizerKind::Sgd) not_rescued.push_back(below(c));
    }
    return {verdict_of(not_rescued),
            cat("Without a norm, mean validation accuracy: ", figures, "; Adam surely rescues it at ",
                std::count(not_rescued.begin(), not_rescued.end(), Truth::No), " of ", not_rescued.size(),
                " learning rates, ", std::count(not_rescued.begin(), not_rescued.end(), Truth::Unsure),
                " within the margin (learns above ", kLearnedAccuracy, ").")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::string> header{"norm"};
    for (const Trainer& t : trainers(s)) header.push_back(trainer_label(t));
    std::vector<std::vector<std::string>> rows;
    for (NormKind norm : norms(s)) {
      std::vector<std::string> row{lesson::display_name(norm)};
      for (const Trainer& t : trainers(s)) {
        const auto runs = of(records, norm, t);
        row.push_back(mean_range(spread(runs, "train_loss")) + " / " + mean_range(spread(runs, "val_accuracy")) +
                      diverged_note(count_status(runs, "diverged")));
      }
      rows.push_back(row);
    }
    return {"Training loss / validation accuracy after the last epoch, mean [min, max] over seeds:\n\n" +
                markdown_table(header, rows),
            {draw_plot(s.out_dir, "adam_norm.png", picture(records, s), 900, 520)}};
  }

 private:
  static std::vector<Record> of(const std::vector<Record>& records, NormKind norm, const Trainer& t) {
    return where_num(
        where(records, {{"norm", lesson::short_name(norm)}, {"optimizer", lesson::short_name(t.optimizer)}}), "lr",
        t.lr);
  }
  static std::string picture(const std::vector<Record>& records, const Settings& s) {
    std::string script =
        "set title 'Adam and normalization: validation accuracy after training (mean, range over seeds)'\n"
        "set ylabel 'validation accuracy'\nset yrange [0:1]\nset key bottom right\nset style data histogram\n"
        "set style histogram errorbars gap 1 lw 1\nset style fill solid 0.7 border -1\nset xtics nomirror\n";
    std::vector<std::vector<double>> rows;
    const auto ts = trainers(s);
    for (size_t n = 0; n < norms(s).size(); ++n) {
      std::vector<double> row{double(n)};
      for (const Trainer& t : ts) {
        const lesson::Spread acc = spread(of(records, norms(s)[n], t), "val_accuracy");
        row.insert(row.end(), {acc.count ? acc.mean : 0.0, acc.count ? acc.min : 0.0, acc.count ? acc.max : 0.0});
      }
      rows.push_back(row);
    }
    script += datablock("acc", rows);
    std::vector<std::string> names;
    for (NormKind norm : norms(s)) names.push_back(lesson::short_name(norm));
    script += "set xtics (" + xtics(names, "'") + ")\n";
    std::string plots;
    for (size_t i = 0; i < ts.size(); ++i)
      plots += cat(i ? ", " : "plot ", "$acc using ", 2 + 3 * i, ":", 3 + 3 * i, ":", 4 + 3 * i, " title '",
                   trainer_label(ts[i]), "'");
    return script + plots + "\n";
  }
};

}  // namespace

std::shared_ptr<const Experiment> adam_norm_experiment() { return std::make_shared<AdamNorm>(); }

}  // namespace minidl::lab
