// Small batches with the learning rate scaled to the batch: is it BatchNorm's statistics or the
// step's noise that fails at batch sizes 1 and 2?
#include "experiments/experiments.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

constexpr double kDrop = 0.1;   // how far below batch 64 BatchNorm must fall at batch 2 to "struggle"
constexpr double kWorks = 0.5;  // the validation accuracy LayerNorm must reach at batch size 1 to "work"
constexpr double kLessonBatch = 64;
constexpr double kLessonLr = 0.05;  // at the lesson's batch; lr = kLessonLr * batch / kLessonBatch

std::vector<double> sizes(const Settings& s) {
  return s.quick ? std::vector<double>{1, 2, 64} : std::vector<double>{1, 2, 4, 8, 64};
}
std::vector<NormKind> norms() {
  return {NormKind::Batch, NormKind::Layer, NormKind::Group, NormKind::RMS, NormKind::None};
}
std::vector<Record> runs(const std::vector<Record>& records, NormKind norm, double batch) {
  return where_num(of_norm(records, norm), "batch_size", batch);
}

class ScaledLrBatch : public Experiment {
 public:
  ScaledLrBatch()
      : Experiment({"scaled_lr_batch", "Small batches with the learning rate scaled to the batch",
                    "with the learning rate scaled linearly with the batch, so that an epoch moves the weights as far "
                    "at every batch size, LayerNorm works at batch size 1 while BatchNorm still struggles at batch "
                    "size 2: its statistics, not the step's noise, fail there",
                    "lesson, \"Batch norm's two modes\"; Layer Normalization note, \"Layer norm vs. batch norm\"; "
                    "Goyal et al. 2017, Accurate, Large Minibatch SGD, Sec. 2.1 (the linear scaling rule)"}) {}
  std::string setup(const Settings& s) const override {
    return cat("The lesson's network, SGD with lr ", kLessonLr, " x batch / ", kLessonBatch, " (", kLessonLr,
               " at the lesson's batch 64, 1/1280 at batch 1), batch size ", joined(sizes(s)),
               " with --drop-last, x batch / layer / group / rms / none, ", lesson_training(s).epochs,
               " epoch(s). BatchNorm at batch size 1 is refused, as PyTorch refuses it.");
  }
  std::string rule() const override {
    return cat(
        "(a) BatchNorm struggles: seed by seed, its validation accuracy at batch 64 minus at batch 2 is on "
        "average above ",
        kDrop,
        ", and LayerNorm's minus BatchNorm's at batch 2 is on average above 0; (b) LayerNorm works at batch "
        "size 1: BatchNorm is refused there and LayerNorm's mean validation accuracy is above ",
        kWorks, " (a diverged run counts as 0). Held: (a) and (b); held partly: one; did not hold: neither.",
        margin_rule(cat(kAccuracyFloor, " of accuracy")));
  }
  std::vector<Job> plan(const Context& c) const override {
    return grid_jobs(c, Record(), "batch_size", sizes(c.settings), norms(), c.settings.seeds,
                     [](lesson::TrainOptions& o, double b) {
                       o.batch_size = int64_t(b);
                       o.drop_last = true;
                       o.lr = kLessonLr * b / kLessonBatch;
                     });
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    const auto batch_at_2 = runs(records, NormKind::Batch, 2);
    const Comparison drop = accuracy_gain(runs(records, NormKind::Batch, kLessonBatch), batch_at_2, kDrop);
    const Comparison behind = accuracy_gain(runs(records, NormKind::Layer, 2), batch_at_2, 0.0);
    const Truth struggles = all_of({above(drop), above(behind)});
    const Comparison layer_at_1 = accuracy_against(runs(records, NormKind::Layer, 1), kWorks, 0.0);
    const bool bn1_refused = count_status(runs(records, NormKind::Batch, 1), "refused") > 0;
    const Truth works = all_of({above(layer_at_1), truth_of(bn1_refused)});
    return {verdict_of({struggles, works}),
            cat("(a) BatchNorm's accuracy at batch 64 minus at batch 2: ", comparison_text(drop),
                "; LayerNorm's minus BatchNorm's at batch 2: ", comparison_text(behind), ": ",
                truth_text(struggles, "it struggles", "it does not struggle by this rule"),
                ". (b) LayerNorm at batch size 1 reaches ", comparison_text(layer_at_1), " (BatchNorm ",
                bn1_refused ? "refused" : "not refused",
                "): ", truth_text(works, "it works", "it does not work by this rule"), ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    const GridTable table = grid_table(records, norms(), {"batch_size", sizes(s), "val_accuracy", accuracy_cell});
    const std::string script =
        table.blocks +
        "set title 'Validation accuracy, lr scaled with the batch (mean and range over seeds)'\n"
        "set logscale x 2\nset xlabel 'batch size (lr = 0.05 x batch / 64)'\nset ylabel 'validation accuracy'\n"
        "set yrange [0:1]\nset xrange [0.8:80]\nset key bottom right\n" +
        table.plot + "\n";
    return {cat("Validation accuracy after ", lesson_training(s).epochs, " epoch(s), mean [min, max] over seeds:\n\n",
                markdown_table(grid_header("norm", "batch ", sizes(s)), table.rows)),
            {draw_plot(s.out_dir, "scaled_lr_batch.png", script)}};
  }
};

}  // namespace

std::shared_ptr<const Experiment> scaled_lr_batch_experiment() { return std::make_shared<ScaledLrBatch>(); }

}  // namespace minidl::lab
