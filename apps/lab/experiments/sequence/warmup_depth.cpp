// Sequence chapter, 1. Warmup, width and depth: where post-LN charlm needs a learning-rate
// warmup and pre-LN does not (Xiong et al. 2020, Sec. 3, Fig. 2 and 3), as a boundary map.
#include <algorithm>
#include <cmath>

#include "charlm_runs.hpp"
#include "experiments/experiments.hpp"
#include "tools.hpp"

namespace minidl::lab {

namespace {

using charlm::Position;

constexpr double kStuckLine = 2.8;      // nats: the letter frequencies' loss is 2.94, a learning run falls far below
constexpr double kSeqLossFloor = 0.05;  // nats: the margin's floor
const double kUniformLoss = std::log(27.0);  // guessing: a run that did not finish counts as this

/// A point of the map: the model's width and depth and AdamW's lr.
struct Cell {
  int64_t width, layers;
  double lr;
};
/// The runs of each cell: post-LN without and with the warmup, pre-LN without.
struct Arm {
  Position position;
  bool warm;
};
const Arm kArms[] = {{Position::Post, false}, {Position::Post, true}, {Position::Pre, false}};

int64_t steps(const Settings& s) { return s.quick ? 6 : 100; }
int64_t warmup_steps(const Settings& s) { return s.quick ? 3 : 50; }
/// The map's two slices: width against lr at this depth, depth against lr at this width.
int64_t map_depth(const Settings& s) { return s.quick ? 2 : 8; }
int64_t map_width(const Settings& s) { return s.quick ? 32 : 128; }
/// A cross through the regime where the claim shows, sparse where a wide run costs most
/// (width 256, four times width 128, at one lr).
std::vector<Cell> cells(const Settings& s) {
  if (s.quick) return {{32, 2, 3e-3}, {32, 1, 3e-3}};
  return {{32, 8, 3e-3},  {64, 8, 3e-3},  {128, 8, 3e-3}, {256, 8, 3e-3}, {32, 8, 1e-2}, {64, 8, 1e-2},
          {128, 8, 1e-2}, {128, 2, 3e-3}, {128, 4, 3e-3}, {128, 2, 1e-2}, {128, 4, 1e-2}};
}
/// At most three of the seeds: the grid is large, and the whole lab keeps to its budget.
std::vector<uint64_t> seeds(const Settings& s) {
  return {s.seeds.begin(), s.seeds.begin() + std::min<ptrdiff_t>(3, ptrdiff_t(s.seeds.size()))};
}

std::string arm_name(const Arm& a, const Settings& s) {
  return cat(charlm::short_name(a.position), "-LN, ", a.warm ? cat(warmup_steps(s), "-step warmup") : "no warmup");
}
std::string cell_name(const Cell& c) { return cat("width ", c.width, ", ", c.layers, " layers, lr ", plain(c.lr)); }

std::vector<Record> runs(const std::vector<Record>& records, const Cell& c, const Arm& a, const Settings& s) {
  const auto mine = where(records, {{"position", charlm::short_name(a.position)}});
  return where_num(
      where_num(where_num(where_num(mine, "width", double(c.width)), "layers", double(c.layers)), "lr", c.lr), "warmup",
      a.warm ? double(warmup_steps(s)) : 0.0);
}
/// The cell's validation loss against the stuck line: Above is stuck, Below trains.
Comparison outcome(const std::vector<Record>& records, const Cell& c, const Arm& a, const Settings& s) {
  return compare_to_threshold(values_counting_failures(runs(records, c, a, s), "val_loss", kUniformLoss), kStuckLine,
                              kSeqLossFloor);
}
std::string outcome_text(const Comparison& c) {
  return c.side == Side::Above ? "stuck" : c.side == Side::Below ? "trains" : "unsure";
}

class WarmupDepth : public Experiment {
 public:
  WarmupDepth()
      : Experiment(
            {"warmup_depth", "Warmup, width and depth: where post-LN needs a warmup",
             "post-norm transformers need a learning-rate warmup: without one they stay stuck where a warmup lets them "
             "train; pre-norm ones train there without one",
             "Layer Normalization note, \"Where it goes in a block\"; Xiong et al. 2020, Sec. 3 and Fig. 2, 3"}) {}
  std::string setup(const Settings& s) const override {
    return cat(
        "charlm (apps/charlm) on the word list, 4 heads, makemore's initialization, in the cells of the table: width "
        "against lr at depth ",
        map_depth(s), ", depth against lr at width ", map_width(s),
        " (width 256 costs four times width 128, so it runs at one lr). LayerNorm before each sublayer (pre-LN, with a "
        "final norm) or after each residual sum (post-LN); AdamW (weight decay 0.01, betas 0.9, 0.99) for ",
        steps(s),
        " steps of 32 words (stuck or learning shows by then); post-LN without a warmup and with a linear warmup from "
        "1% of the lr over the first ",
        warmup_steps(s),
        " steps, pre-LN without one (the claim asks nothing of pre-LN with a warmup); the validation loss in eval mode "
        "at the end; at most 3 seeds. The letter frequencies alone give 2.94 nats on the validation words; a run whose "
        "loss turned NaN or infinite \"diverged\" and counts as guessing (ln 27 = ",
        fixed(kUniformLoss), " nats).",
        s.quick ? " --quick: a few steps and one seed, which only proves the code paths run." : "");
  }
  std::string rule() const override {
    return cat(
        "a cell (width, depth, lr) and set-up is \"stuck\" when its mean validation loss over seeds is above ",
        kStuckLine,
        " nats (near the letter frequencies' 2.94) and \"trains\" when below. Post-LN \"needs a warmup\" in a cell "
        "when it is stuck there without one and trains with one. Part 1: post-LN needs a warmup in at least one cell. "
        "Part 2: pre-LN without a warmup trains in every cell where post-LN needs one (and there is such a cell). "
        "Held: both; held partly: part 1 only; did not hold: neither (post-LN never needs a warmup on the map). Cells "
        "where post-LN stays stuck even with the warmup lie beyond the claim and are reported, not judged.",
        margin_rule(cat(kSeqLossFloor, " nats")));
  }
  std::vector<uint64_t> seeds_used(const Settings& s) const override { return seeds(s); }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (const Cell& cell : cells(c.settings))
      for (const Arm& arm : kArms)
        for (uint64_t seed : seeds(c.settings)) {
          charlm::RunOptions o = charlm_training(c.settings, steps(c.settings), steps(c.settings));
          o.model.width = cell.width;
          o.model.layers = cell.layers;
          o.model.position = arm.position;
          o.lr = cell.lr;
          o.trainer.warmup = arm.warm ? warmup_steps(c.settings) : 0;
          o.seed = seed;
          const Record keys = Record().set("width", double(cell.width)).set("layers", double(cell.layers));
          jobs.push_back(charlm_job(c, o, Record(keys).set("lr", cell.lr).set("warmup", double(o.trainer.warmup))));
        }
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<Truth> needs, pre_trains_there;
    std::string needed, beyond;
    for (const Cell& c : cells(s)) {
      // Post-LN needs a warmup in the cell: stuck without it, trains with it.
      const Truth need = all_of({above(outcome(records, c, kArms[0], s)), below(outcome(records, c, kArms[1], s))});
      needs.push_back(need);
      pre_trains_there.push_back(any_of({negation(need), below(outcome(records, c, kArms[2], s))}));
      if (need == Truth::Yes) needed += cat(needed.empty() ? "" : "; ", cell_name(c));
      if (above(outcome(records, c, kArms[1], s)) == Truth::Yes)
        beyond += cat(beyond.empty() ? "" : "; ", cell_name(c));
    }
    const Truth part1 = any_of(needs), part2 = all_of({part1, all_of(pre_trains_there)});
    return {verdict_of({part1, part2}),
            cat("Post-LN needs a warmup (stuck without, trains with) at: ", needed.empty() ? "no cell" : needed,
                ". Post-LN stuck even with the warmup at: ", beyond.empty() ? "no cell" : beyond, ". Part 1 ",
                truth_text(part1, "holds", "does not hold"),
                "; part 2 (pre-LN without a warmup trains wherever post-LN needs one) ",
                truth_text(part2, "holds", "does not hold"), ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::string> header{"width", "layers", "lr"};
    for (const Arm& a : kArms) header.push_back(arm_name(a, s));
    std::vector<std::vector<std::string>> rows;
    for (const Cell& c : cells(s)) {
      std::vector<std::string> row{cat(c.width), cat(c.layers), plain(c.lr)};
      for (const Arm& a : kArms) {
        const auto mine = runs(records, c, a, s);
        row.push_back(cat(mean_range(spread_counting_failures(mine, "val_loss", kUniformLoss)), " ",
                          outcome_text(outcome(records, c, a, s)),
                          count_status(mine, "ok") < mine.size()
                              ? cat(", ", mine.size() - count_status(mine, "ok"), " diverged")
                              : ""));
      }
      rows.push_back(row);
    }
    return {
        "Validation loss (nats), mean [min, max] over seeds (a diverged run counting ln 27), and the cell's "
        "outcome:\n\n" +
            markdown_table(header, rows) +
            "\n**Second look**: at width 128, 8 layers and lr 3e-3, post-LN without a warmup is stuck for some seeds "
            "only, and the warmup rescues it: 100 steps and three seeds cannot tell a slow start from a stuck run. "
            "\"Warmup against no warmup, post-LN and pre-LN, by paired differences\" (warmup_gap) trains that cell "
            "for 300 steps over five seeds and judges the warmup's effect by paired differences.\n",
        {draw(s.out_dir, "warmup_depth.png", picture(records, s))}};
  }

 private:
  /// The boundary map: a panel per set-up, width against lr at depth 8 above, depth against
  /// lr at width 128 below; each cell a dot coloured by its outcome, labelled with its loss.
  static std::string picture(const std::vector<Record>& records, const Settings& s) {
    std::string script =
        plot_header("warmup_depth.png", 1200, 760) +
        "set multiplot layout 2,3 title \"Where post-LN needs a warmup in charlm: green trains, red stuck, grey within "
        "the margin (mean validation loss)\"\nset logscale x 2\nset logscale y\nset ytics (0.001, 0.003, 0.01)\nset "
        "key off\nset ylabel 'AdamW lr'\nset linetype 11 lc rgb '#1b9e77'\nset linetype 12 lc rgb '#999999'\nset "
        "linetype 13 lc rgb '#d95f02'\nset yrange [0.0015:0.02]\nset format y '%g'\n";
    for (const char* axis : {"width", "layers"}) {
      const bool by_width = std::string(axis) == "width";
      for (const Arm& a : kArms) {
        std::vector<std::vector<double>> rows;
        for (const Cell& c : cells(s)) {
          if (by_width ? c.layers != map_depth(s) : c.width != map_width(s)) continue;
          const Comparison o = outcome(records, c, a, s);
          rows.push_back({double(by_width ? c.width : c.layers), c.lr, o.mean,
                          11.0 + int(o.side)});  // linetype 11 trains (Below), 12 within, 13 stuck
        }
        const std::string block = cat(axis, "_", &a - kArms);
        script +=
            datablock(block, rows) + cat("set title '", arm_name(a, s),
                                         by_width ? cat(", ", map_depth(s), " layers") : cat(", width ", map_width(s)),
                                         "'\nset xlabel '", axis, "'\nset xrange [", by_width ? "22:360" : "0.7:11.3",
                                         "]\nplot $", block, " using 1:2:4 with points pt 7 ps 5 lc variable, $", block,
                                         " using 1:2:(sprintf('%.2f', $3)) with labels offset 0,1.8\n");
      }
    }
    return script + "unset multiplot\n";
  }
};

}  // namespace

std::shared_ptr<const Experiment> warmup_depth_experiment() { return std::make_shared<WarmupDepth>(); }

}  // namespace minidl::lab
