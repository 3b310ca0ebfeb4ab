// Sequence chapter, 1. Warmup and depth: charlm (small) pre- and post-LN at growing depth,
// AdamW at two learning rates, with and without a linear warmup (Xiong et al. 2020).
#include <algorithm>
#include <cmath>

#include "charlm_runs.hpp"
#include "experiments/experiments.hpp"
#include "tools.hpp"

namespace minidl::lab {

namespace {

using charlm::Position;

constexpr int64_t kWidth = 32;               // small, so the deepest stacks fit the lab's budget
constexpr double kWarmupGain = 0.05;         // nats: what "needs a warmup" means, see rule()
constexpr double kSeqLossFloor = 0.02;       // nats: the margin's floor, about 1% of the loss
constexpr double kStuckLoss = 2.8;           // nats: a finished run this high learned letter counts at most
const double kUniformLoss = std::log(27.0);  // guessing: a run that did not finish counts as this

int64_t steps(const Settings& s) { return s.quick ? 12 : 500; }
int64_t warmup_steps(const Settings& s) { return s.quick ? 4 : 100; }
std::vector<int64_t> depths(const Settings& s) {
  return s.quick ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{2, 4, 8};
}
std::vector<double> learning_rates(const Settings& s) {
  return s.quick ? std::vector<double>{3e-3} : std::vector<double>{5e-4, 3e-3};
}
std::vector<int64_t> warmups(const Settings& s) { return {0, warmup_steps(s)}; }
const std::vector<Position>& positions() {
  static const std::vector<Position> list{Position::Pre, Position::Post};
  return list;
}
/// At most three of the seeds: the grid is large, and the whole lab keeps to its budget.
std::vector<uint64_t> seeds(const Settings& s) {
  return {s.seeds.begin(), s.seeds.begin() + std::min<ptrdiff_t>(3, ptrdiff_t(s.seeds.size()))};
}

std::vector<Record> cell(const std::vector<Record>& records, Position position, int64_t layers, double lr,
                         int64_t warmup) {
  const auto mine = where(records, {{"position", charlm::short_name(position)}});
  return where_num(where_num(where_num(mine, "layers", double(layers)), "lr", lr), "warmup", double(warmup));
}

/// Per seed, the validation loss without warmup minus with it (a run that did not finish
/// counting as guessing's ln 27), at the deepest depth and the largest lr.
Comparison warmup_gain(const std::vector<Record>& records, const Settings& s, Position position) {
  const int64_t deepest = depths(s).back();
  const double lr = learning_rates(s).back();
  return compare_to_threshold(
      paired_differences(cell(records, position, deepest, lr, 0), cell(records, position, deepest, lr, warmup_steps(s)),
                         "val_loss", kUniformLoss),
      kWarmupGain, kSeqLossFloor);
}

size_t count_stuck(const std::vector<Record>& runs) {
  size_t n = 0;
  for (const Record& r : runs) n += r.text("status") == "ok" && r.num("val_loss") >= kStuckLoss;
  return n;
}

std::string cell_text(const std::vector<Record>& runs) {
  std::string text = mean_range(spread_counting_failures(runs, "val_loss", kUniformLoss));
  if (const size_t bad = count_status(runs, "diverged") + count_status(runs, "failed"))
    text += cat(", ", bad, " diverged");
  if (const size_t stuck = count_stuck(runs)) text += cat(", ", stuck, " stuck");
  return text;
}

class WarmupDepth : public Experiment {
 public:
  WarmupDepth()
      : Experiment({"warmup_depth", "Warmup and depth: pre-LN against post-LN in charlm",
                    "pre-norm transformers train deep stacks without a learning-rate warmup; post-norm ones need one",
                    "Layer Normalization note, \"Where it goes in a block\"; Xiong et al. 2020"}) {}
  std::string setup(const Settings& s) const override {
    return cat("charlm (apps/charlm) on the word list at width ", kWidth,
               " (makemore's 64 halved, to keep the deepest stacks in the lab's budget), 4 heads, ", joined(depths(s)),
               " layers, LayerNorm before each sublayer (pre-LN, with a final norm) or after each residual sum "
               "(post-LN); AdamW (weight decay 0.01, betas 0.9, 0.99) at lr ",
               joined(learning_rates(s)), " for ", steps(s),
               " steps of 32 words, without a warmup or with a linear "
               "warmup from 1% of the lr over the first ",
               warmup_steps(s),
               " steps; the validation loss in eval mode at the end; at most 3 seeds (the grid is large). A run whose "
               "loss turned NaN or infinite is \"diverged\" and counts as guessing (ln 27 = ",
               fixed(kUniformLoss), " nats); a finished run at ", kStuckLoss, " nats or more is \"stuck\".",
               s.quick ? " --quick: a few steps and one seed, which only proves the code paths run." : "");
  }
  std::string rule() const override {
    return cat(
        "at the deepest depth and the largest lr, the warmup's gain is, seed by seed, the validation loss "
        "without warmup minus the loss with it (a diverged run counting ln 27). Post-LN \"needs a warmup\" "
        "when its mean gain is above ",
        kWarmupGain, " nats; pre-LN \"trains without one\" when its mean gain is below ", kWarmupGain,
        " nats. Held: both; held partly: one; did not hold: neither.", margin_rule(cat(kSeqLossFloor, " nats")));
  }
  std::vector<uint64_t> seeds_used(const Settings& s) const override { return seeds(s); }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (Position position : positions())
      for (int64_t layers : depths(c.settings))
        for (double lr : learning_rates(c.settings))
          for (int64_t warmup : warmups(c.settings))
            for (uint64_t seed : seeds(c.settings)) {
              charlm::RunOptions o = charlm_training(c.settings, steps(c.settings), steps(c.settings));
              o.model.width = kWidth;
              o.model.layers = layers;
              o.model.position = position;
              o.lr = lr;
              o.trainer.warmup = warmup;
              o.seed = seed;
              jobs.push_back(
                  charlm_job(c, o, Record().set("layers", double(layers)).set("lr", lr).set("warmup", double(warmup))));
            }
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    const Comparison post = warmup_gain(records, s, Position::Post), pre = warmup_gain(records, s, Position::Pre);
    const Truth post_needs = above(post), pre_free = below(pre);
    auto failures = [&](Position p) {
      const auto runs = where(records, {{"position", charlm::short_name(p)}});
      return cat(count_status(runs, "diverged") + count_status(runs, "failed"), " diverged and ", count_stuck(runs),
                 " stuck of ", runs.size());
    };
    return {verdict_of({post_needs, pre_free}),
            cat("At ", depths(s).back(), " layers and lr ", plain(learning_rates(s).back()),
                ", the warmup's gain (loss without minus with it, nats): post-LN ", comparison_text(post), " (",
                truth_text(post_needs, "needs a warmup", "does not need one"), "), pre-LN ", comparison_text(pre), " (",
                truth_text(pre_free, "trains without one", "needs one too"), "). Over the whole grid: post-LN ",
                failures(Position::Post), " runs, pre-LN ", failures(Position::Pre), ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::string> header{"position", "lr", "warmup"};
    for (int64_t layers : depths(s)) header.push_back(cat(layers, " layers"));
    std::vector<std::vector<std::string>> rows;
    for (double lr : learning_rates(s))
      for (Position position : positions())
        for (int64_t warmup : warmups(s)) {
          std::vector<std::string> row{charlm::short_name(position) + "-LN", plain(lr),
                                       warmup ? cat(warmup, " steps") : "none"};
          for (int64_t layers : depths(s)) row.push_back(cell_text(cell(records, position, layers, lr, warmup)));
          rows.push_back(row);
        }
    const std::string table =
        "Validation loss (nats), mean [min, max] over seeds, a diverged run counting ln 27; diverged and stuck runs "
        "when any:\n\n" +
        markdown_table(header, rows);
    return {table, {draw(s.out_dir, "warmup_depth.png", picture(records, s))}};
  }

 private:
  /// Validation loss against depth, a line per position and warmup, a panel per lr.
  static std::string picture(const std::vector<Record>& records, const Settings& s) {
    std::string script = two_panels(
        "warmup_depth.png",
        "Warmup and depth in charlm: validation loss (mean and range over seeds; a diverged run counts ln 27)");
    const char* const colours[] = {"#1b9e77", "#66c2a5", "#d95f02", "#fc8d62"};
    for (double lr : learning_rates(s)) {
      std::string plots;
      size_t i = 0;
      for (Position position : positions())
        for (int64_t warmup : warmups(s)) {
          std::vector<std::vector<double>> rows;
          for (int64_t layers : depths(s)) {
            const lesson::Spread loss =
                spread_counting_failures(cell(records, position, layers, lr, warmup), "val_loss", kUniformLoss);
            rows.push_back({double(layers), loss.mean, loss.min, loss.max});
          }
          const std::string block = cat("w", plain(lr * 1e4), "_", i);
          script += datablock(block, rows);
          plots += cat(i ? ", " : "plot ", "$", block, " using 1:2:3:4 with yerrorlines lw 2 lc rgb '", colours[i],
                       "' dt ", warmup ? 1 : 2, " title '", charlm::short_name(position), "-LN, ",
                       warmup ? cat(warmup, "-step warmup") : std::string("no warmup"), "'");
          ++i;
        }
      script += cat("set title 'AdamW lr ", plain(lr),
                    "'\nset logscale x 2\nset xlabel 'layers'\nset ylabel 'validation loss (nats)'\n"
                    "set key top left\n",
                    plots, "\n");
    }
    return script + "unset multiplot\n";
  }
};

}  // namespace

std::shared_ptr<const Experiment> warmup_depth_experiment() { return std::make_shared<WarmupDepth>(); }

}  // namespace minidl::lab
