// 11. GroupNorm's Figure 1 on the digits: validation error against batch size for
// BatchNorm2d, GroupNorm, LayerNorm (GroupNorm(1, C)) and instance norm (GroupNorm(C, C))
// in the digits' CNN (apps/common/models/cnn.hpp); and BatchNorm2d trains at batch 1.
#include "experiments/experiments.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

constexpr double kRise = 0.1;    // how far BatchNorm2d's error at batch 2 must rise above its best at >= 16
constexpr double kFlat = 0.05;   // how close GroupNorm's error at batch 2 must stay to its best at >= 16
constexpr double kChance = 0.2;  // the accuracy BatchNorm2d at batch 1 must pass to "train" (chance: 0.1)
constexpr double kBaseLr = 0.05, kBaseBatch = 64;  // the lesson's lr at its batch, scaled linearly

std::vector<double> sizes(const Settings& s) {
  if (s.quick) return {1, 2, 64};
  return {1, 2, 4, 8, 16, 32, 64, 128};
}
std::vector<NormKind> norms() { return {NormKind::Batch, NormKind::Group, NormKind::Layer, NormKind::Instance}; }

std::vector<Record> runs(const std::vector<Record>& records, NormKind norm, double batch) {
  return where_num(of_norm(records, norm), "batch_size", batch);
}

class CnnBatchSize : public Experiment {
 public:
  CnnBatchSize()
      : Experiment(
            {"cnn_batch_size", "GroupNorm's Figure 1 on the digits",
             "BatchNorm's error rises as the batch shrinks (its statistics become noisy), while GroupNorm's stays "
             "flat; and BatchNorm2d, unlike BatchNorm1d, trains at batch size 1 (each channel still has H x W values)",
             "Wu & He, Group Normalization (2018), Figure 1"}) {}
  std::string setup(const Settings& s) const override {
    return cat(
        "The digits' CNN (3 convolutions, global average pooling, Linear; docs/cnn.md) with BatchNorm2d, "
        "GroupNorm(8, C), GroupNorm(1, C) and GroupNorm(C, C); batch size ",
        joined(sizes(s)), " with --drop-last, ", lesson_training(s).epochs,
        " epoch(s), SGD with the lr scaled linearly ", "with the batch as the paper does (", kBaseLr, " at batch ",
        kBaseBatch, ").");
  }
  std::string rule() const override {
    return cat(
        "seed by seed, a norm's validation error at batch 2 minus at its best batch size of 16 or more (by "
        "the mean over seeds), averaged over seeds: (a) BatchNorm2d's is above ",
        kRise, "; (b) GroupNorm's is below ", kFlat,
        "; (c) BatchNorm2d at batch 1 trains: no run refused or diverged, and its mean "
        "validation accuracy is above ",
        kChance,
        " (chance is 0.1). A diverged run counts as error 1. Held: all three; held partly: one "
        "or two; did not hold: none.",
        margin_rule(cat(kAccuracyFloor, " of accuracy or error")));
  }
  std::vector<Job> plan(const Context& c) const override {
    return grid_jobs(c, {}, "batch_size", sizes(c.settings), norms(), c.settings.seeds,
                     [](lesson::TrainOptions& o, double b) {
                       o.model.arch = lesson::Arch::CNN;
                       o.batch_size = int64_t(b);
                       o.drop_last = true;
                       o.lr = kBaseLr * b / kBaseBatch;
                     });
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    // Seed by seed, the error at batch 2 minus at the norm's best batch size of 16 or more.
    auto rise = [&](NormKind norm, double threshold) {
      double best_size = 0, best = -1.0;
      for (double b : sizes(s))
        if (const double acc = spread_counting_failures(runs(records, norm, b), "val_accuracy", 0.0).mean;
            b >= 16 && acc > best)
          best = acc, best_size = b;
      return accuracy_gain(runs(records, norm, best_size), runs(records, norm, 2), threshold);
    };
    const Comparison bn = rise(NormKind::Batch, kRise), gn = rise(NormKind::Group, kFlat);
    const auto bn1 = runs(records, NormKind::Batch, 1);
    const size_t bn1_bad = count_status(bn1, "refused") + count_status(bn1, "diverged") + count_status(bn1, "failed");
    const Truth all_finished = truth_of(!bn1.empty() && bn1_bad == 0);
    const Comparison bn1_acc = bn1.empty() ? Comparison{} : accuracy_against(bn1, kChance, 0.0);
    const Truth rises = above(bn), flat = below(gn);
    const Truth trains = bn1.empty() ? Truth::No : all_of({all_finished, above(bn1_acc)});
    return {
        verdict_of({rises, flat, trains}),
        cat("(a) BatchNorm2d's error at batch 2 minus at its best batch >= 16: ", comparison_text(bn), ": ",
            truth_text(rises, "it rises", "it does not rise by this rule"), ". (b) GroupNorm's: ", comparison_text(gn),
            ": ", truth_text(flat, "flat", "not flat by this rule"), ". (c) BatchNorm2d at batch 1: ", bn1_bad, " of ",
            bn1.size(), " runs refused or diverged, mean accuracy ", bn1.empty() ? "n/a" : comparison_text(bn1_acc),
            ": ", truth_text(trains, "it trains", "it does not train by this rule"), ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    const GridTable table = grid_table(
        records, norms(),
        {"batch_size", sizes(s), "val_accuracy", error_cell, "n", 0.04, "(1-$2):(1-$4):(1-$3)", lesson::Arch::CNN});
    const std::string script =
        "set title 'The digits CNN: validation error against batch size (mean and range over seeds)'\n"
        "set logscale x 2\nset xlabel 'batch size'\nset ylabel 'validation error'\n"
        "set yrange [0:1]\nset xrange [0.8:160]\nset key top right\n" +
        table.blocks + table.plot + "\n";
    return {cat("Validation error (1 - accuracy) after ", lesson_training(s).epochs,
                " epoch(s), mean [min, max] over seeds:\n\n",
                markdown_table(grid_header("norm", "batch ", sizes(s)), table.rows),
                "\n**Second look**: the two parts within their margins are not a regime the grid missed. (a)'s "
                "threshold 0.1 is the size of the paper's own effect (Wu & He's Table 3: BatchNorm's ImageNet error "
                "23.6% at 32 images per GPU, 34.7% at 2), and the digits reproduce about that size, so no number of "
                "seeds puts it surely on either side; the figure's direction, BatchNorm2d's error rising from batch "
                "16 down to 1 while GroupNorm's does not, is what the BatchNorm2d and GroupNorm rows show. (c) is "
                "an imprecise sentence: at batch size 1, train-mode BatchNorm2d normalizes each channel over one "
                "image's H x W positions, which is instance normalization (GroupNorm(C, C), whose row stays near "
                "error 0.7 at every batch size on these 8 x 8 digits), and eval mode then uses running averages of "
                "those per-image statistics, a model no image was trained with. It runs at batch 1 (nothing is "
                "refused); it does not train the BatchNorm the other columns do.\n"),
            {draw_plot(s.out_dir, "cnn_batch_size.png", script)}};
  }

 private:
  // The validation error (1 - accuracy), mean [min, max], and the runs that failed.
  static std::string error_cell(const std::vector<Record>& at) {
    const lesson::Spread acc = spread(at, "val_accuracy");
    const size_t failed = at.size() - acc.count;
    if (acc.count == 0) return "failed";
    return cat(fixed(1.0 - acc.mean, 2), " [", fixed(1.0 - acc.max, 2), ", ", fixed(1.0 - acc.min, 2), "]",
               failed ? cat(" (", failed, " failed)") : "");
  }
};

}  // namespace

std::shared_ptr<const Experiment> cnn_batch_size_experiment() { return std::make_shared<CnnBatchSize>(); }

}  // namespace minidl::lab
