// Sequence 4. Train-mode BatchNorm leaks batch mates and future tokens into each output of a
// causal model; LayerNorm and RMSNorm do not, to the last bit.
#include "charlm_runs.hpp"
#include "checks.hpp"
#include "experiments/experiments.hpp"
#include "probes.hpp"

namespace minidl::lab {

namespace {

using charlm::NormKind;

constexpr double kLeak = 1e-4;      // a leak moves an earlier logit by more than this
constexpr double kGap = 0.05;       // a material gap between eval-mode and reported loss, in nats
constexpr double kGapFloor = 0.02;  // its margin floor
constexpr int64_t kBatch = 32;      // words per batch
constexpr int64_t kGapBatches = 8;  // training batches the two losses are compared on
constexpr int64_t kGapSteps = 300;  // training steps before the comparison
constexpr int64_t kQuickSteps = 5;
constexpr size_t kUnusedValidation = 250;  // train_run's final evaluation, not measured here

struct Probe {
  NormKind norm;
  bool train_mode;
};
std::vector<Probe> probes() {
  return {{NormKind::Layer, true},       {NormKind::RMS, true},    {NormKind::Batch, true},
          {NormKind::BatchMasked, true}, {NormKind::Batch, false}, {NormKind::BatchMasked, false}};
}
std::vector<NormKind> batch_norms() { return {NormKind::Batch, NormKind::BatchMasked}; }
std::string mode_name(bool train_mode) { return train_mode ? "train" : "eval"; }
std::string probe_title(const Probe& p) { return cat(charlm::short_name(p.norm), " (", mode_name(p.train_mode), ")"); }

/// x with each token of word `row` at positions [from, to] moved to the next letter (z to a).
Tensor with_letters_changed(const Tensor& x, int64_t row, int64_t from, int64_t to) {
  std::vector<float> tokens = x.to_vector();  // (B, T)
  const int64_t t = x.size(1);
  for (int64_t j = from; j <= to; ++j) {
    float& token = tokens[size_t(row * t + j)];
    token = float(int64_t(token) % 26 + 1);
  }
  return Tensor::from_vector(tokens, x.shape());
}

/// max |a - b| over word `row`'s positions [0, to] of two (B, T, V) logits.
double moved(const Tensor& a, const Tensor& b, int64_t row, int64_t to) {
  const int64_t t = a.size(1), v = a.size(2);
  const std::vector<float> x = a.to_vector(), y = b.to_vector();
  double d = 0.0;
  for (int64_t i = row * t * v; i < (row * t + to + 1) * v; ++i)
    d = std::max(d, std::fabs(double(x[size_t(i)]) - double(y[size_t(i)])));
  return d;
}

}  // namespace

LeakMoves measure_leak(const charlm::WordSplit& words, NormKind norm, bool train_mode, uint64_t seed) {
  charlm::ModelOptions options;
  options.norm = norm;
  auto model = fresh_model(options, seed);
  model->train(train_mode);
  NoGradGuard no_grad;
  const charlm::Batch batch = training_words(words, kBatch, seed);
  const int64_t t = batch.x.size(1);
  const std::vector<float> tokens = batch.x.to_vector();  // (B, T)
  auto letters = [&](int64_t row) {                       // a word's letters sit at positions 1..n, its padding is 0
    int64_t n = 0;
    while (n + 1 < t && tokens[size_t(row * t + n + 1)] != 0.0f) ++n;
    return n;
  };
  const int64_t n0 = letters(0), n1 = letters(1);
  const Tensor base = model->forward(batch.x, batch.mask);  // (B, T, V)
  const Tensor later = model->forward(with_letters_changed(batch.x, 0, n0, n0), batch.mask);
  const Tensor mate = model->forward(with_letters_changed(batch.x, 1, 1, n1), batch.mask);
  return {.later_token = moved(base, later, 0, n0 - 1), .batch_mate = moved(base, mate, 0, n0)};
}

namespace {

Record leak_record(const std::string& part, NormKind norm, bool train_mode, uint64_t seed) {
  return {{"part", part}, {"norm", charlm::short_name(norm)}, {"mode", mode_name(train_mode)}, {"seed", double(seed)}};
}

Record exact_probe(const Context& c, const Probe& p, uint64_t seed) {
  const LeakMoves m = measure_leak(c.words, p.norm, p.train_mode, seed);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return leak_record("exact", p.norm, p.train_mode, seed)
      .set("later_token", m.later_token)
      .set("batch_mate", m.batch_mate)
      .set("status", "ok")
      .set("train_mode_loss", nan)
      .set("eval_mode_loss", nan);
}

/// After a short training run, the loss of the same training batches as training reports it
/// (train mode) and in eval mode.
Record gap_probe(const Context& c, const charlm::RunOptions& o) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Record r = leak_record("gap", o.model.norm, true, o.seed).set("later_token", nan).set("batch_mate", nan);
  charlm::RunResult run;
  try {
    run = charlm::train_run(with_validation_words(c.words, kUnusedValidation), o);
  } catch (const std::exception&) {
    return r.set("status", "failed").set("train_mode_loss", nan).set("eval_mode_loss", nan);
  }
  if (!run.ok()) return r.set("status", "diverged").set("train_mode_loss", nan).set("eval_mode_loss", nan);
  const ModeLosses losses = mode_losses(*run.model, c.words, kBatch, kGapBatches, o.seed);
  return r.set("status", "ok").set("train_mode_loss", losses.train_mode).set("eval_mode_loss", losses.eval_mode);
}

std::vector<Record> of_probe(const std::vector<Record>& records, const std::string& part, NormKind norm,
                             bool train_mode) {
  return where(records, {{"part", part}, {"norm", charlm::short_name(norm)}, {"mode", mode_name(train_mode)}});
}

/// Per seed, eval-mode loss minus the train-mode (reported) loss.
std::vector<double> gaps(const std::vector<Record>& records, NormKind norm) {
  std::vector<double> values;
  for (const Record& r : of_probe(records, "gap", norm, true))
    values.push_back(r.num("eval_mode_loss") - r.num("train_mode_loss"));
  return values;
}

class Leak : public Experiment {
 public:
  Leak()
      : Experiment({"leak", "Train-mode BatchNorm leaks batch mates and future tokens",
                    "in a causal model, train-mode BatchNorm lets batch mates and later tokens move each output, and "
                    "the training loss it reports is not the model's loss in use; LayerNorm and RMSNorm move nothing, "
                    "to the last bit",
                    "study guide, \"leaks batch mates into each output\"; lesson, \"Why transformers use layer "
                    "norm\""}) {}
  std::string setup(const Settings& s) const override {
    return cat(
        "charlm's model (makemore's: 4 blocks, width 64, pre-norm), freshly built from each seed, on a batch of ",
        kBatch,
        " training words: the logits once, then with word 0's last letter changed (the largest move of its "
        "earlier positions' logits) and with word 1's letters changed (the largest move of word 0's logits), "
        "for LayerNorm, RMSNorm and both BatchNorms in train mode, and the BatchNorms in eval mode. Then "
        "BatchNorm and batch-masked BatchNorm trained ",
        charlm_training(s, kGapSteps, kQuickSteps).steps, " steps (charlm's AdamW, batch 32) and, on ", kGapBatches,
        " fresh training batches, the mean loss in train mode (what training reports) and in eval "
        "mode",
        quick_note(s, "one seed and 5 steps"));
  }
  std::string rule() const override {
    return cat(
        "four parts. (1) LayerNorm and RMSNorm: the earlier logits move by exactly 0 (bit for bit) for both "
        "changes on every seed. (2) Train-mode BatchNorm, both flavours: a batch mate moves word 0's logits by "
        "more than ",
        kLeak,
        " on every seed. (3) The same for a later token of the same word. (4) Both flavours' mean gap, "
        "eval-mode loss minus the reported train-mode loss, above ",
        kGap,
        " nats. Held: all four; held partly: some; did not hold: none. Parts 1 to 3 are exact checks:", exact_rule(),
        " Part 4:", margin_rule(cat(kGapFloor, " of loss")));
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (const Probe& p : probes())
      append(jobs, seed_jobs(c.settings.seeds, 3000.0, [&c, p](uint64_t seed) { return exact_probe(c, p, seed); }));
    append(jobs, charlm_jobs(c, charlm_training(c.settings, kGapSteps, kQuickSteps), batch_norms(),
                             [&c](const charlm::RunOptions& o) { return gap_probe(c, o); }));
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    // A figure's spread over a norm's train-mode probes: NaN for no probes (spread_of).
    auto moves = [&](NormKind norm, const std::string& figure) {
      return spread(of_probe(records, "exact", norm, true), figure);
    };
    auto largest = [&](NormKind norm, const std::string& figure) { return moves(norm, figure).max; };
    auto smallest = [&](NormKind norm, const std::string& figure) { return moves(norm, figure).min; };
    bool still = true, mates = true, later = true;
    for (NormKind norm : {NormKind::Layer, NormKind::RMS})
      still = still && largest(norm, "later_token") == 0.0 && largest(norm, "batch_mate") == 0.0;
    std::vector<Truth> gap_parts;
    std::string gap_text;
    for (NormKind norm : batch_norms()) {
      mates = mates && smallest(norm, "batch_mate") > kLeak;
      later = later && smallest(norm, "later_token") > kLeak;
      const Comparison g = compare_to_threshold(gaps(records, norm), kGap, kGapFloor);
      gap_parts.push_back(above(g));
      gap_text += cat(gap_text.empty() ? "" : ", ", charlm::short_name(norm), " ", comparison_text(g));
    }
    const Truth gap = all_of(gap_parts);
    return {verdict_of({truth_of(still), truth_of(mates), truth_of(later), gap}),
            cat("LayerNorm and RMSNorm: the largest move ",
                sci(std::max(largest(NormKind::Layer, "later_token"), largest(NormKind::RMS, "later_token"))),
                " for a later token, ",
                sci(std::max(largest(NormKind::Layer, "batch_mate"), largest(NormKind::RMS, "batch_mate"))),
                " for a batch mate (", still ? "zero to the last bit" : "not zero",
                "). Train-mode BatchNorm, the smallest move over seeds: batch mate ",
                sci(smallest(NormKind::Batch, "batch_mate")), " (batch), ",
                sci(smallest(NormKind::BatchMasked, "batch_mate")), " (batch-masked); later token ",
                sci(smallest(NormKind::Batch, "later_token")), " (batch), ",
                sci(smallest(NormKind::BatchMasked, "later_token")), " (batch-masked). Eval-mode minus reported loss: ",
                gap_text, " (", truth_text(gap, "a material gap", "no material gap"), ").")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<double>> bars;
    std::vector<std::string> labels;
    for (const Probe& p : probes()) {
      const auto mine = of_probe(records, "exact", p.norm, p.train_mode);
      const lesson::Spread later = spread(mine, "later_token"), mate = spread(mine, "batch_mate");
      std::string gap = "-";
      if (p.train_mode && p.norm != NormKind::Layer && p.norm != NormKind::RMS) {
        const auto trained = of_probe(records, "gap", p.norm, true);
        gap = cat(mean_range(spread(trained, "train_mode_loss")), " / ", mean_range(spread(trained, "eval_mode_loss")));
      }
      rows.push_back(
          {probe_title(p), sci(later.max), sci(mate.max), later.max == 0.0 && mate.max == 0.0 ? "yes" : "no", gap});
      bars.push_back({double(bars.size()), std::max(later.max, 1e-12), std::max(mate.max, 1e-12)});
      labels.push_back(probe_title(p));
    }
    const std::string table =
        "Largest move of an earlier logit over seeds, and after training the loss on the same training batches as "
        "training reports it (train mode) and in eval mode (mean [min, max] over seeds):\n\n" +
        markdown_table({"norm (mode)", "later token", "batch mate", "zero bit for bit", "train-mode / eval-mode loss"},
                       rows);
    const std::string script =
        plot_header("leak.png", 900, 480) + datablock("moves", bars) +
        cat("set title \"How far earlier logits move when a later token or a batch mate changes (1e-12 = not at "
            "all)\"\nset logscale y\nset yrange [1e-13:100]\nset style fill solid 0.7\nset boxwidth 0.35\n"
            "set ylabel 'largest move of a logit'\nset key top right\nset xtics (",
            xtics(labels),
            ")\nplot $moves using ($1-0.18):2 with boxes lc rgb '#4477aa' title 'later token', "
            "$moves using ($1+0.18):3 with boxes lc rgb '#cc6677' title 'batch mate'\n");
    const std::string second_look =
        "\n**Second look**: parts 1 to 3 hold exactly; part 4 asks how large the leak is, which the sentence leaves "
        "open. At batch 32 each channel's statistics pool over the positions of 32 words, a few hundred "
        "values, so one token moves them by well under a percent: the logits move by hundredths (the table) and "
        "the mean loss by thousandths of a nat. The reported loss is not the loss in use, as claimed, but at "
        "charlm's batch size the difference is below anything the rule calls material. The gap grows as fewer "
        "positions share the statistics: \"BatchNorm on micro-batches in charlm\" (micro_batch) measures it "
        "the same way at batch 4.\n";
    return {table + second_look, {draw(s.out_dir, "leak.png", script)}};
  }
};

}  // namespace

std::shared_ptr<const Experiment> leak_experiment() { return std::make_shared<Leak>(); }

}  // namespace minidl::lab
