// Sequence chapter, 1. Warmup, width and depth: where post-LN charlm needs a learning-rate
// warmup and pre-LN does not (Xiong et al. 2020, Sec. 3, Fig. 2 and 3), as a boundary map
// judged cell by cell by paired differences over seeds.

#include "experiments/experiments.hpp"
#include "probes.hpp"
#include "tools.hpp"
#include "warmup_runs.hpp"

namespace minidl::lab {

namespace {

using namespace warmup;

constexpr uint64_t kSeedOffset = 10;  // one cell was seen at 300 steps on seeds 0-9 before this rule
constexpr double kStuckLine = 2.8;    // nats: the letter frequencies' loss is 2.94, a learning run falls far below

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

/// An arm's mean final loss in a cell against the stuck line: Above is stuck, Below trains.
Comparison against_stuck_line(const std::vector<Record>& records, const Cell& c, const Arm& a) {
  return compare_to_threshold(values_counting_failures(runs_of(records, c, a), "val_loss", kUniformLoss), kStuckLine,
                              kLossFloor);
}
/// The warmup's gain for post-LN in a cell: mean d_a against its threshold.
Comparison warmup_gain(const std::vector<Record>& records, const Cell& c) {
  return compare_to_threshold(against_warm(runs_of(records, c, kArms[0]), runs_of(records, c, kArms[1])),
                              kWarmupMatters, kLossFloor);
}
/// The warmup rescues post-LN in a cell: it gains more than the threshold, and post-LN with it trains.
Truth rescues(const std::vector<Record>& records, const Cell& c) {
  return all_of({above(warmup_gain(records, c)), below(against_stuck_line(records, c, kArms[1]))});
}
std::string outcome_text(const Comparison& c) {
  return c.side == Side::Above ? "stuck" : c.side == Side::Below ? "trains" : "unsure";
}
std::string names(const std::vector<Cell>& cells) {
  std::string text;
  for (const Cell& c : cells) text += cat(text.empty() ? "" : "; ", cell_name(c));
  return text.empty() ? "no cell" : text;
}

class WarmupMap : public Experiment {
 public:
  WarmupMap()
      : Experiment(
            {"warmup_map", "Warmup, width and depth: where post-LN needs a warmup",
             "post-norm transformers need a learning-rate warmup: without one they stay stuck where a warmup lets them "
             "train; pre-norm ones train there without one",
             "Layer Normalization note, \"Where it goes in a block\"; Xiong et al. 2020, Sec. 3 and Fig. 2, 3"}) {}
  std::string setup(const Settings& s) const override {
    return cat("charlm (apps/charlm) on the word list in the cells of the table: width against lr at depth ",
               map_depth(s), ", depth against lr at width ", map_width(s),
               " (width 256 costs four times width 128, so it runs at one lr); ", training_text(s),
               "; at most 3 seeds. The letter frequencies alone give 2.94 nats on the validation words. On fresh "
               "seeds: each seed s runs as s + ",
               kSeedOffset, ", since the cell at width 128, 8 layers, lr 0.003 was seen at 300 steps on seeds 0-9",
               quick_note(s, "a few steps and one seed"));
  }
  std::string rule() const override {
    return cat(
        "per cell (width, depth, lr) and seed, d_a = L(post-LN, no warmup) - L(post-LN, warmup), L the final "
        "validation loss in nats. The warmup \"rescues\" post-LN in a cell when the mean of d_a is above ",
        kWarmupMatters,
        " nats (a quarter of the way from a trained model, ~2.2, to the letter frequencies, 2.94) and post-LN with "
        "the warmup trains there: its mean L is below ",
        kStuckLine,
        " nats (near the letters' 2.94 a run is stuck). Part 1: the warmup rescues post-LN in at least one cell. "
        "Part 2: pre-LN without a warmup trains (mean L below ",
        kStuckLine,
        ") in every cell where the warmup rescues post-LN. Held: both; held partly: part 1 only; did not hold: "
        "neither. Cells where post-LN is stuck even with the warmup lie beyond the claim and are reported, not "
        "judged.",
        margin_rule(cat(kLossFloor, " nats")));
  }
  /// At most three seeds: the grid is large, and the whole lab keeps to its budget.
  std::vector<uint64_t> seeds_used(const Settings& s) const override { return first_seeds(s, 3, kSeedOffset); }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> all;
    for (const Cell& cell : cells(c.settings)) append(all, jobs(c, cell, seeds_used(c.settings), false));
    return all;
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<Truth> rescued, pre_trains_there;
    std::vector<Cell> sure, beyond;
    for (const Cell& c : cells(s)) {
      const Truth rescue = rescues(records, c);
      rescued.push_back(rescue);
      pre_trains_there.push_back(any_of({negation(rescue), below(against_stuck_line(records, c, kArms[2]))}));
      if (rescue == Truth::Yes) sure.push_back(c);
      if (above(against_stuck_line(records, c, kArms[1])) == Truth::Yes) beyond.push_back(c);
    }
    const Truth part1 = any_of(rescued), part2 = all_of({part1, all_of(pre_trains_there)});
    return {verdict_of({part1, part2}),
            cat("The warmup rescues post-LN at: ", names(sure), ". Post-LN stuck even with the warmup at: ",
                names(beyond), ". Part 1 ", truth_text(part1, "holds", "does not hold"),
                "; part 2 (pre-LN without a warmup trains wherever the warmup rescues post-LN) ",
                truth_text(part2, "holds", "does not hold"), ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::string> header{"width", "layers", "lr"};
    for (const Arm& a : kArms) header.push_back(arm_name(a, s));
    header.insert(header.end(), {"mean d_a", "the warmup"});
    std::vector<std::vector<std::string>> rows;
    for (const Cell& c : cells(s)) {
      std::vector<std::string> row{cat(c.width), cat(c.layers), plain(c.lr)};
      for (const Arm& a : kArms)
        row.push_back(cat(mean_range(spread_counting_failures(runs_of(records, c, a), "val_loss", kUniformLoss)), " ",
                          outcome_text(against_stuck_line(records, c, a))));
      row.push_back(comparison_text(warmup_gain(records, c)));
      row.push_back(truth_text(rescues(records, c), "rescues", "does not rescue"));
      rows.push_back(row);
    }
    return {
        "Final validation loss (nats), mean [min, max] over seeds (a diverged run counting ln 27), each against "
        "the stuck line; the warmup's mean gain d_a for post-LN with its margin, and whether it rescues post-LN:\n\n" +
            markdown_table(header, rows),
        {draw(s.out_dir, "warmup_map.png", picture(records, s))}};
  }

 private:
  /// The boundary map: a panel per set-up, width against lr at depth 8 above, depth against
  /// lr at width 128 below; each cell a dot coloured by its outcome, labelled with its loss.
  static std::string picture(const std::vector<Record>& records, const Settings& s) {
    std::string script =
        plot_header("warmup_map.png", 1200, 760) +
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
          const Comparison o = against_stuck_line(records, c, a);
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

std::shared_ptr<const Experiment> warmup_map_experiment() { return std::make_shared<WarmupMap>(); }

}  // namespace minidl::lab
