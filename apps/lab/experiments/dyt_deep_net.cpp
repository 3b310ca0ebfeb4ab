// Papers chapter: DyT in the lesson's network (Zhu et al. 2025): the elementwise tanh that replaces
// LayerNorm in transformers, in place of the norm of the deep tanh network, where nothing
// else keeps the activations' scale.
#include "experiments/experiments.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

constexpr double kLearnedAccuracy = 0.5;  // five times chance, as the depth experiment's
constexpr double kAsWell = 0.05;          // of accuracy: "as well as LayerNorm" means at most this much lower

const std::vector<NormKind>& norms() {
  static const std::vector<NormKind> list{NormKind::None, NormKind::Layer, NormKind::DyT};
  return list;
}

class DytDeepNet : public Experiment {
 public:
  DytDeepNet()
      : Experiment({"dyt_deep_net", "DyT in place of LayerNorm in the deep tanh network",
                    "DyT (y = weight * tanh(alpha x) + bias, alpha learned, no statistics) can replace "
                    "LayerNorm: the lesson's deep tanh network learns with it, and as well as with LayerNorm",
                    "Zhu, Chen, He, LeCun and Liu 2025, \"Transformers without Normalization\", Sec. 1 and 5 "
                    "(claimed for transformers; tried here on the lesson's network)"}) {}
  std::string setup(const Settings& s) const override {
    return cat("The lesson's network (depth 8, width 64, PyTorch's init, SGD lr 0.05, batch 64, ",
               lesson_training(s).epochs,
               " epoch(s)) with no norm, LayerNorm, or DyT (alpha 0.5 at init) after each Linear.");
  }
  std::string rule() const override {
    return cat("(a) DyT learns: its mean validation accuracy over seeds is above ", kLearnedAccuracy,
               "; (b) as well as LayerNorm: DyT's accuracy minus LayerNorm's, seed by seed, is on average above -",
               kAsWell, " (a diverged run counting as 0.1). Held: both; held partly: one; did not hold: neither.",
               margin_rule(cat(kAccuracyFloor, " of accuracy")));
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (NormKind norm : norms())
      for (uint64_t seed : c.settings.seeds) jobs.push_back(train_job(c, lesson_run(c.settings, norm, seed)));
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    const auto dyt = of_norm(records, NormKind::DyT), layer = of_norm(records, NormKind::Layer);
    const Comparison learns = accuracy_against(dyt, kLearnedAccuracy, 0.1);
    const Comparison gap = accuracy_gain(dyt, layer, -kAsWell, 0.1);
    const Truth learned = above(learns), as_well = above(gap);
    return {verdict_of({learned, as_well}),
            cat("DyT's mean validation accuracy: ", comparison_text(learns), " (",
                truth_text(learned, "learns", "does not learn"), "); DyT's minus LayerNorm's: ", comparison_text(gap),
                " (", truth_text(as_well, "as well", "worse"), ").")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> rows;
    for (NormKind norm : norms()) {
      const auto runs = of_norm(records, norm);
      rows.push_back({lesson::display_name(norm), mean_range(spread(runs, "train_loss")),
                      mean_range(spread(runs, "val_accuracy")) + diverged_note(count_status(runs, "diverged"))});
    }
    return {"After the last epoch, mean [min, max] over seeds:\n\n" +
                markdown_table({"norm", "training loss", "validation accuracy"}, rows),
            {draw_plot(s.out_dir, "dyt_deep_net.png", picture(records, s), 800, 480)}};
  }

 private:
  /// The validation accuracy per seed, a line per norm.
  static std::string picture(const std::vector<Record>& records, const Settings& s) {
    std::string script =
        cat("set title 'DyT in the lesson''s network: validation accuracy per seed'\nset xlabel 'seed'\n"
            "set ylabel 'validation accuracy'\nset yrange [0:1]\nset xtics 1\nset key bottom right\n",
            "set xrange [", double(s.seeds.front()) - 0.5, ":", double(s.seeds.back()) + 0.5, "]\n");
    const char* const colours[] = {"#555555", "#d95f02", "#a6761d"};  // none, LayerNorm, DyT
    std::string plots;
    for (size_t n = 0; n < norms().size(); ++n) {
      std::vector<std::vector<double>> rows;
      for (const Record& r : of_norm(records, norms()[n])) rows.push_back({r.num("seed"), r.num("val_accuracy")});
      script += datablock(cat("acc", n), rows);
      plots += cat(n ? ", " : "plot ", "$acc", n, " using 1:2 with linespoints lw 2 pt 7 lc rgb '", colours[n],
                   "' title '", lesson::display_name(norms()[n]), "'");
    }
    return script + plots + "\n";
  }
};

}  // namespace

std::shared_ptr<const Experiment> dyt_deep_net_experiment() { return std::make_shared<DytDeepNet>(); }

}  // namespace minidl::lab
