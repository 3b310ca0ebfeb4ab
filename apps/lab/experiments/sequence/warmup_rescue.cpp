// The papers: Xiong et al.'s warmup claim in the one charlm regime where post-LN fails (width
// 128, 8 layers, AdamW lr 3e-3), trained long enough to settle and judged seed by seed.
#include <algorithm>

#include "experiments/experiments.hpp"
#include "tools.hpp"
#include "warmup_runs.hpp"

namespace minidl::lab {

namespace {

using namespace warmup;

constexpr double kStuckAbove = 2.85;   // nats: the letter frequencies give 2.94, warmup_depth's stuck line is 2.8
constexpr double kTrainsBelow = 2.75;  // nats: between the two lines a run is undecided

enum class RunClass { Stuck, Undecided, Trains };

/// The claim expects post-LN without a warmup stuck, the other arms to train.
bool expects_stuck(const Arm& a) { return a.position == charlm::Position::Post && !a.warm; }
RunClass classify(double loss) {
  return loss > kStuckAbove ? RunClass::Stuck : loss < kTrainsBelow ? RunClass::Trains : RunClass::Undecided;
}
std::string class_text(RunClass c) {
  return c == RunClass::Stuck ? "stuck" : c == RunClass::Trains ? "trains" : "undecided";
}
size_t on_claims_side(const std::vector<Record>& runs, const Arm& a) {
  return size_t(std::count_if(runs.begin(), runs.end(), [&](const Record& r) {
    return classify(final_loss(r)) == (expects_stuck(a) ? RunClass::Stuck : RunClass::Trains);
  }));
}
/// The arm agrees (Yes) with at least 80% of its seeds on the claim's side, disagrees (No)
/// with at most half, and is undecided between.
Truth agrees(const std::vector<Record>& runs, const Arm& a) {
  const size_t k = on_claims_side(runs, a), n = runs.size();
  if (n == 0) throw Error(cat("warmup_rescue: no run of arm ", a.id));
  return 5 * k >= 4 * n ? Truth::Yes : 2 * k <= n ? Truth::No : Truth::Unsure;
}

/// The truth's words, "undecided" when unsure: this rule has counts, not margins.
std::string said(Truth t, const std::string& yes, const std::string& no) {
  return t == Truth::Unsure ? "undecided" : truth_text(t, yes, no);
}

class WarmupRescue : public Experiment {
 public:
  WarmupRescue()
      : Experiment({"warmup_rescue", "A warmup rescues post-LN at width 128 and lr 3e-3",
                    "at the width and learning rate where it fails, post-LN needs a learning-rate warmup to train: "
                    "without one it stays stuck, with one it trains; pre-LN trains there without a warmup",
                    "Xiong et al. 2020, On Layer Normalization in the Transformer Architecture, Sec. 3.1 and Fig. 2, "
                    "Sec. 3.3; Layer Normalization note, \"Where it goes in a block\""}) {}
  std::string setup(const Settings& s) const override {
    return setup_text(s,
                      "The cell of warmup_depth's map where post-LN without a warmup was stuck for some seeds only, "
                      "trained three times as long");
  }
  std::string rule() const override {
    return cat(
        "each run is classified by its final validation loss L: \"stuck\" if L > ", kStuckAbove,
        " nats, \"trains\" if L < ", kTrainsBelow,
        ", \"undecided\" in between (warmup_depth's stuck line is 2.8, the letter frequencies give 2.94); a run that "
        "diverges or does not finish counts as stuck, at ln 27. Each arm counts its seeds on the claim's side: "
        "post-LN without a warmup, stuck; post-LN with the warmup, trains; pre-LN, trains. An arm \"agrees\" when at "
        "least 80% of its seeds are on the claim's side, \"disagrees\" when at most half are, and is \"undecided\" "
        "otherwise (with 5 seeds: 4-5 agree, 0-2 disagree, 3 undecided). Part (a), post-LN fails where pre-LN "
        "trains: holds if both those arms agree, fails if either disagrees. Part (b), the warmup rescues post-LN: "
        "holds if its arm agrees, fails if it disagrees. Held: (a) and (b) hold; held partly: one holds and the "
        "other fails; did not hold: both fail; inconclusive: an arm is undecided (named). Each run is judged on "
        "its own, so no margin over seeds enters: the two lines leave a band of 0.1 nats for runs that sit near "
        "them.");
  }
  std::vector<Job> plan(const Context& c) const override { return jobs(c, 0); }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<Truth> arms;
    std::string counts, undecided;
    for (const Arm& a : kArms) {
      const auto mine = runs_of(records, a);
      arms.push_back(agrees(mine, a));
      counts += cat(counts.empty() ? "" : "; ", arm_name(a, s), ": ", on_claims_side(mine, a), " of ", mine.size(),
                    expects_stuck(a) ? " stuck" : " train", " (", said(arms.back(), "agrees", "disagrees"), ")");
      if (arms.back() == Truth::Unsure) undecided += cat(undecided.empty() ? "" : " and ", arm_name(a, s));
    }
    const Truth a = all_of({arms[0], arms[2]}), b = arms[1];
    const std::string parts =
        cat("Seeds on the claim's side: ", counts, ". Part (a), post-LN fails where pre-LN trains, ",
            said(a, "holds", "fails"), "; part (b), the warmup rescues post-LN, ", said(b, "holds", "fails"), ".");
    if (!undecided.empty()) return {Verdict::Inconclusive, cat(parts, " Undecided: ", undecided, ".")};
    return {verdict_of({a, b}), parts};
  }
  Description describe(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<std::vector<std::string>> per_seed, per_arm;
    for (const Arm& a : kArms) {
      const auto mine = runs_of(records, a);
      size_t classes[3] = {0, 0, 0};
      for (const Record& r : mine) {
        const RunClass c = classify(final_loss(r));
        ++classes[int(c)];
        const bool ok = r.text("status") == "ok";
        per_seed.push_back(
            {arm_name(a, s), cat(r.num("seed")), ok ? fixed(r.num("val_loss")) : r.text("status"), class_text(c)});
      }
      per_arm.push_back({arm_name(a, s), cat(on_claims_side(mine, a), " of ", mine.size()), cat(classes[0]),
                         cat(classes[1]), cat(classes[2]),
                         mean_range(spread_counting_failures(mine, "val_loss", kUniformLoss))});
    }
    const std::string table =
        cat("Per arm (", conditions(s),
            "): the seeds on the claim's side, the classes, and the final validation loss (nats), mean [min, max] "
            "over seeds (a diverged run counting ln 27):\n\n",
            markdown_table({"arm", "on the claim's side", "stuck", "undecided", "trains", "validation loss"}, per_arm),
            "\nPer run:\n\n", markdown_table({"arm", "seed", "final validation loss", "class"}, per_seed),
            "\n**Second look**: runs that end between the two lines leave an arm undecided; \"Warmup against no "
            "warmup, post-LN and pre-LN, by paired differences\" (warmup_gap) runs the same regime on fresh seeds and "
            "judges the paired differences over seeds against the lab's margins.\n");
    return {table, {draw(s.out_dir, "warmup_rescue.png", picture(records, s))}};
  }

 private:
  /// Left: each arm's training loss over steps. Right: each run's final validation loss
  /// against the rule's two lines.
  static std::string picture(const std::vector<Record>& records, const Settings& s) {
    std::string finals, script = two_panels("warmup_rescue.png", cat("Warmup and post-LN: ", conditions(s)));
    std::vector<std::string> labels;
    for (size_t i = 0; i < std::size(kArms); ++i) {
      std::vector<std::vector<double>> dots;
      for (const Record& r : runs_of(records, kArms[i]))
        dots.push_back({double(i) + 0.04 * (r.num("seed") - 2.0), final_loss(r)});
      script += datablock(cat("f", i), dots);
      finals += cat(i ? ", " : "", "$f", i, " using 1:2 with points pt 7 ps 1.5 lc rgb '", kColours[i], "' notitle");
      labels.push_back(arm_name(kArms[i], s));
    }
    script += loss_curves_panel(records, s);
    script += cat("set title 'final validation loss per seed'\nset xlabel ''\nset xtics (", xtics(labels),
                  ")\nset xrange [-0.5:2.5]\nset yrange [*<2.6:3.0<*]\nunset key\nset arrow from -0.5,", kStuckAbove,
                  " to 2.5,", kStuckAbove, " nohead dt 2 lc rgb '#d95f02'\nset arrow from -0.5,", kTrainsBelow,
                  " to 2.5,", kTrainsBelow, " nohead dt 2 lc rgb '#1b9e77'\nplot ", finals, "\n");
    return script + "unset multiplot\n";
  }
};

}  // namespace

std::shared_ptr<const Experiment> warmup_rescue_experiment() { return std::make_shared<WarmupRescue>(); }

}  // namespace minidl::lab
