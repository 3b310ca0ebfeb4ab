// The papers: Xiong et al.'s warmup claim in the cell of warmup_map where post-LN fails, over
// five fresh seeds, judged by paired differences over seeds against margins.
#include "experiments/experiments.hpp"
#include "probes.hpp"
#include "tools.hpp"
#include "warmup_runs.hpp"

namespace minidl::lab {

namespace {

using namespace warmup;

constexpr uint64_t kSeedOffset = 5;  // seeds 0-4 were seen before this rule was written
constexpr double kNoWorse = 0.05;    // nats

Cell cell(const Settings& s) { return s.quick ? Cell{32, 2, 3e-3} : Cell{128, 8, 3e-3}; }
std::string conditions(const Settings& s) { return cat("charlm ", cell_name(cell(s)), ", ", steps(s), " steps"); }

/// Per seed, L(arm) - L(post-LN with the warmup).
std::vector<double> against_warm(const std::vector<Record>& records, const Arm& a) {
  return warmup::against_warm(runs_of(records, a), runs_of(records, kArms[1]));
}

class WarmupGap : public Experiment {
 public:
  WarmupGap()
      : Experiment({"warmup_gap", "Warmup against no warmup, post-LN and pre-LN, by paired differences",
                    "at the width and lr where post-LN fails without it, a warmup is what post-LN needs and pre-LN "
                    "does not: post-LN without a warmup ends clearly worse than with one, and pre-LN without one "
                    "ends no worse than post-LN with it",
                    "Xiong et al. 2020, On Layer Normalization in the Transformer Architecture, Sec. 3.1 and Fig. 2; "
                    "Sec. 3.3 and 4"}) {}
  std::string setup(const Settings& s) const override {
    return cat("charlm (apps/charlm) on the word list, ", cell_name(cell(s)), ", ", training_text(s),
               ". On fresh seeds: each seed s runs as seed s + ", kSeedOffset,
               ", since this rule was written after a first run of this cell on seeds 0-4, judged run by run against "
               "a stuck line: its runs sat on the line and its verdict changed with the BLAS kernel",
               quick_note(s, cat("width 32, 2 layers, ", steps(s), " steps and one seed")));
  }
  std::string rule() const override {
    return cat(
        "per seed, d_a = L(post-LN, no warmup) - L(post-LN, warmup) and d_b = L(pre-LN, no warmup) - "
        "L(post-LN, warmup), L the final validation loss in nats (a run that diverges or does not finish "
        "counts ln 27). Part (a), the warmup matters for post-LN: the mean of d_a is above ",
        kWarmupMatters,
        " nats (about a quarter of the way from a trained model, ~2.2, to the letter frequencies, 2.94). Part "
        "(b), pre-LN needs none: the mean of d_b is below ",
        kNoWorse,
        " nats. Held: both parts hold; held partly: one holds and the other fails; did not hold: both fail; "
        "inconclusive: a part's mean sits within its margin (named).",
        margin_rule(cat(kLossFloor, " nats")));
  }
  std::vector<uint64_t> seeds_used(const Settings& s) const override {
    return first_seeds(s, s.seeds.size(), kSeedOffset);
  }
  std::vector<Job> plan(const Context& c) const override {
    return jobs(c, cell(c.settings), seeds_used(c.settings), true);
  }
  Decision decide(const std::vector<Record>& records, const Settings&) const override {
    const Comparison a = compare_to_threshold(against_warm(records, kArms[0]), kWarmupMatters, kLossFloor);
    const Comparison b = compare_to_threshold(against_warm(records, kArms[2]), kNoWorse, kLossFloor);
    const std::string why =
        cat("Part (a), post-LN without a warmup against with it: mean d_a ", comparison_text(a), " nats against ",
            kWarmupMatters, ", ", truth_text(above(a), "holds", "fails"),
            ". Part (b), pre-LN without a warmup against post-LN with it: mean d_b ", comparison_text(b),
            " nats against ", kNoWorse, ", ", truth_text(below(b), "holds", "fails"), ".");
    std::string within;
    if (a.side == Side::Within) within = "part (a)";
    if (b.side == Side::Within) within += cat(within.empty() ? "" : " and ", "part (b)");
    return {verdict_of({above(a), below(b)}), within.empty() ? why : cat(why, " Within the margin: ", within, ".")};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    const auto d_a = against_warm(records, kArms[0]), d_b = against_warm(records, kArms[2]);
    const auto warm = runs_of(records, kArms[1]);
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<double>> dots;
    for (size_t k = 0; k < warm.size(); ++k) {
      const double seed = warm[k].num("seed");
      const auto loss = [&](const Arm& a) {
        return fixed(final_loss(where_num(runs_of(records, a), "seed", seed)[0]));
      };
      rows.push_back({cat(seed), loss(kArms[0]), loss(kArms[1]), loss(kArms[2]), fixed(d_a[k]), fixed(d_b[k])});
      dots.push_back({seed, d_a[k], d_b[k]});
    }
    const Comparison a = compare_to_threshold(d_a, kWarmupMatters, kLossFloor);
    const Comparison b = compare_to_threshold(d_b, kNoWorse, kLossFloor);
    const std::string table =
        cat("Per seed (", conditions(s),
            "): the final validation loss (nats) of each arm and the paired differences "
            "against post-LN with the warmup (a diverged run counting ln 27):\n\n",
            markdown_table({"seed", arm_name(kArms[0], s), arm_name(kArms[1], s), arm_name(kArms[2], s), "d_a", "d_b"},
                           rows),
            "\nMean d_a ", comparison_text(a), " nats (threshold ", kWarmupMatters, "); mean d_b ", comparison_text(b),
            " nats (threshold ", kNoWorse, ").\n");
    return {table, {draw(s.out_dir, "warmup_gap.png", picture(records, s, dots))}};
  }

 private:
  /// Left: each arm's training loss over steps. Right: d_a and d_b per seed against their thresholds.
  static std::string picture(const std::vector<Record>& records, const Settings& s,
                             const std::vector<std::vector<double>>& dots) {
    return cat(two_panels("warmup_gap.png", cat("Warmup against no warmup: ", conditions(s))), datablock("d", dots),
               loss_curves_panel(records, s),
               "set title 'paired differences per seed (nats)'\nset xlabel 'seed'\nset ylabel 'nats'\nset key top "
               "left\nset xrange [",
               dots.front()[0] - 0.5, ":", dots.back()[0] + 0.5,
               "]\nset offsets 0, 0, 0.1, 0.1\nset arrow from graph 0, first ", kWarmupMatters, " to graph 1, first ",
               kWarmupMatters, " nohead dt 2 lc rgb '", kColours[0], "'\nset arrow from graph 0, first ", kNoWorse,
               " to graph 1, first ", kNoWorse, " nohead dt 2 lc rgb '", kColours[2],
               "'\nplot $d using 1:2 with points pt 7 ps 1.5 lc rgb '", kColours[0],
               "' title 'd_a: post-LN, no warmup - with', $d using 1:3 with points pt 5 ps 1.5 lc rgb '", kColours[2],
               "' title 'd_b: pre-LN, no warmup - post-LN with'\nunset multiplot\n");
  }
};

}  // namespace

std::shared_ptr<const Experiment> warmup_gap_experiment() { return std::make_shared<WarmupGap>(); }

}  // namespace minidl::lab
