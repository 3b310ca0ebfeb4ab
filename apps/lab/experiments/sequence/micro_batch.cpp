// Sequence: BatchNorm trained on micro-batches of 4 words, against LayerNorm: the loss training
// reports against the loss in use, and what eval mode's running statistics cost.
#include <cmath>
#include <limits>

#include "charlm_runs.hpp"
#include "experiments/experiments.hpp"
#include "grid.hpp"
#include "probes.hpp"

namespace minidl::lab {

namespace {

using charlm::NormKind;

constexpr int64_t kBatch = 4;    // words per batch: a micro-batch
constexpr int64_t kSteps = 800;  // 3200 words, a fifth of what batch_one's runs see
constexpr int64_t kQuickSteps = 5;
constexpr int64_t kGapBatches = 8;  // training batches the two modes' losses are compared on
constexpr double kGap = 0.05;       // a material gap between eval-mode and reported loss, in nats
constexpr double kLossFloorNats = 0.02;
constexpr size_t kQuickValidation = 250;

std::vector<NormKind> norms() { return {NormKind::Layer, NormKind::Batch, NormKind::BatchMasked}; }

/// The trained run's record with, on kGapBatches fresh training batches, the mean loss in
/// train mode (as training reports it) and in eval mode.
Record micro_probe(const Context& c, const charlm::RunOptions& o) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ModeLosses losses{nan, nan};
  const Context small{c.settings, c.data,
                      c.settings.quick ? with_validation_words(c.words, kQuickValidation) : c.words};
  Record r = charlm_record(small, o, {}, [&](charlm::RunResult& run) {
    losses = mode_losses(*run.model, c.words, kBatch, kGapBatches, o.seed);
  });
  return r.set("train_mode_loss", losses.train_mode).set("eval_mode_loss", losses.eval_mode);
}

class MicroBatch : public Experiment {
 public:
  MicroBatch()
      : Experiment({"micro_batch", "BatchNorm on micro-batches in charlm",
                    "trained on micro-batches, a BatchNorm model normalizes with statistics in training that are not "
                    "the ones it uses afterwards: the training loss it reports is not its loss in use, and in eval "
                    "mode it is worse than the same model with LayerNorm",
                    "Ioffe 2017, Batch Renormalization, Sec. 1 and Sec. 4.2 (small minibatches); lesson, \"Why "
                    "transformers use layer norm\""}) {}
  std::string setup(const Settings& s) const override {
    return cat("charlm (makemore's model: 4 blocks, width 64, pre-norm; AdamW lr 5e-4) trained ",
               charlm_training(s, kSteps, kQuickSteps).steps, " steps at batch size ", kBatch,
               " words with LayerNorm, BatchNorm over every position and BatchNorm over real tokens only "
               "(batch-masked), the same seeds for each; then, on ",
               kGapBatches, " fresh training batches of ", kBatch,
               " words, the mean loss in train mode (what training reports) and in eval mode, and the validation "
               "loss in eval mode over the whole validation split",
               quick_note(s, cat("one seed, 5 steps and the first ", kQuickValidation, " validation words")));
  }
  std::string rule() const override {
    return cat(
        "two parts, for both BatchNorms. (1) The reported loss is not the loss in use: eval-mode loss minus "
        "train-mode loss on the same training batches, seed by seed, is on average above ",
        kGap,
        " nats (a run that did not finish counts as no gap). (2) Eval mode costs: its validation loss minus "
        "LayerNorm's, seed by seed, is on average above "
        "0 (a run that did not finish counts as ln 27). Held: both; held partly: one; did not hold: neither.",
        margin_rule(cat(kLossFloorNats, " of loss")));
  }
  std::vector<Job> plan(const Context& c) const override {
    charlm::RunOptions o = charlm_training(c.settings, kSteps, kQuickSteps);
    o.batch_size = kBatch;
    return charlm_jobs(c, o, norms(), [&c](const charlm::RunOptions& run) { return micro_probe(c, run); });
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    std::vector<Truth> gaps, costs;
    std::string gap_text, cost_text;
    for (NormKind norm : {NormKind::Batch, NormKind::BatchMasked}) {
      const auto mine = of_norm(records, norm);
      std::vector<double> differences;
      for (const Record& r : mine) {
        const double d = r.num("eval_mode_loss") - r.num("train_mode_loss");
        differences.push_back(std::isnan(d) ? 0.0 : d);
      }
      const Comparison g = compare_to_threshold(differences, kGap, kLossFloorNats);
      const Comparison cost = compare_to_threshold(
          paired_differences(mine, of_norm(records, NormKind::Layer), "val_loss", kUniformLoss), 0.0, kLossFloorNats);
      gaps.push_back(above(g));
      costs.push_back(above(cost));
      gap_text += cat(gap_text.empty() ? "" : ", ", charlm::short_name(norm), " ", comparison_text(g));
      cost_text += cat(cost_text.empty() ? "" : ", ", charlm::short_name(norm), " ", comparison_text(cost));
    }
    const Truth gap = all_of(gaps), cost = all_of(costs);
    return {verdict_of({gap, cost}), cat("(1) Eval-mode minus reported loss on the same training batches: ", gap_text,
                                         " (", truth_text(gap, "a material gap", "no material gap"),
                                         "). (2) Eval-mode validation loss minus "
                                         "LayerNorm's: ",
                                         cost_text, " (", truth_text(cost, "a cost", "no cost"), ").")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<double>> points;
    std::vector<std::string> labels;
    for (NormKind norm : norms()) {
      const auto mine = of_norm(records, norm);
      const lesson::Spread train = spread(mine, "train_mode_loss"), eval = spread(mine, "eval_mode_loss"),
                           val = spread(mine, "val_loss");
      rows.push_back({charlm::short_name(norm), mean_range(train), mean_range(eval), mean_range(val)});
      points.push_back({double(points.size()), train.mean, train.min, train.max, eval.mean, eval.min, eval.max,
                        val.mean, val.min, val.max});
      labels.push_back(charlm::short_name(norm));
    }
    const std::string table = cat(
        "Per norm, mean [min, max] over seeds after ", charlm_training(s, kSteps, kQuickSteps).steps,
        " steps at batch ", kBatch, ":\n\n",
        markdown_table({"norm", "training batches, train mode (reported)", "training batches, eval mode",
                        "validation loss (eval mode)"},
                       rows),
        "\n**Second look**: (1) holds for both BatchNorms: pooled over the positions of 4 words, train mode's "
        "statistics carry the batch's own tokens, later ones included, and the loss it reports is about a tenth of a "
        "nat under eval mode's on the same batches. (2) holds for batch-masked BatchNorm, about 0.06 nats behind "
        "LayerNorm, and sits within its margin for BatchNorm over every position, about 0.01 behind, under the rule's "
        "floor of 0.02: in eval mode it loses train mode's advantage and lands about where LayerNorm is. The sentence "
        "does not say how much worse, and the grid stops early: 800 steps of 4 words leave every model near 2.35 nats, "
        "while LayerNorm reaches about 2.23 after 500 steps at batch 32 (\"A model that writes text runs at batch size "
        "1\" (batch_one)), and Ioffe measures the cost over a full ImageNet training. Whether BatchNorm's cost grows "
        "as the models learn more is a regime no experiment here reaches.\n");
    std::string script = plot_header("micro_batch.png", 800, 460) + datablock("loss", points);
    script += cat("set title 'charlm at batch ", kBatch,
                  ": losses (mean and range over seeds)'\nset offsets 0.5, 0.5, 0.05, 0.05\n"
                  "set ylabel 'loss (nats per token)'\nset key top left\nset xtics (",
                  xtics(labels),
                  ")\nplot $loss using ($1-0.15):2:3:4 with yerrorbars pt 7 lw 2 title 'training batches, train mode', "
                  "$loss using 1:5:6:7 with yerrorbars pt 5 lw 2 title 'training batches, eval mode', "
                  "$loss using ($1+0.15):8:9:10 with yerrorbars pt 9 lw 2 title 'validation, eval mode'\n");
    return {table, {draw(s.out_dir, "micro_batch.png", script)}};
  }
};

}  // namespace

std::shared_ptr<const Experiment> micro_batch_experiment() { return std::make_shared<MicroBatch>(); }

}  // namespace minidl::lab
