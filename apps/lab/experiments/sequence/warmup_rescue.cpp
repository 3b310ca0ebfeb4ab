// The papers: Xiong et al.'s warmup claim in the one charlm regime where post-LN fails (width
// 128, 8 layers, AdamW lr 3e-3), trained long enough to settle and judged seed by seed.
#include <algorithm>
#include <cmath>
#include <optional>

#include "charlm_runs.hpp"
#include "experiments/experiments.hpp"
#include "probes.hpp"
#include "tools.hpp"

namespace minidl::lab {

namespace {

using charlm::Position;

constexpr double kStuckAbove = 2.85;   // nats: the letter frequencies give 2.94, warmup_depth's stuck line is 2.8
constexpr double kTrainsBelow = 2.75;  // nats: between the two lines a run is undecided
constexpr double kLr = 3e-3;
const double kUniformLoss = std::log(27.0);  // guessing: a run that diverged or did not finish

/// A set-up and the class of run the claim expects of it.
struct Arm {
  const char* id;  // the CSV's "arm"
  Position position;
  bool warm;
  bool expects_stuck;
};
const Arm kArms[] = {{"post_no_warmup", Position::Post, false, true},
                     {"post_warmup", Position::Post, true, false},
                     {"pre_no_warmup", Position::Pre, false, false}};
enum class RunClass { Stuck, Undecided, Trains };

int64_t steps(const Settings& s) { return s.quick ? 6 : 300; }
int64_t warmup_steps(const Settings& s) { return s.quick ? 3 : 50; }
int64_t width(const Settings& s) { return s.quick ? 32 : 128; }
int64_t layers(const Settings& s) { return s.quick ? 2 : 8; }
int64_t window(const Settings& s) { return s.quick ? 2 : 10; }  // steps per point of the picture's curves

std::string arm_name(const Arm& a, const Settings& s) {
  return cat(charlm::short_name(a.position), "-LN, ", a.warm ? cat(warmup_steps(s), "-step warmup") : "no warmup");
}
std::vector<Record> runs_of(const std::vector<Record>& records, const Arm& a) {
  return where(records, {{"arm", a.id}});
}
double final_loss(const Record& r) { return std::isnan(r.num("val_loss")) ? kUniformLoss : r.num("val_loss"); }
RunClass classify(double loss) {
  return loss > kStuckAbove ? RunClass::Stuck : loss < kTrainsBelow ? RunClass::Trains : RunClass::Undecided;
}
std::string class_text(RunClass c) {
  return c == RunClass::Stuck ? "stuck" : c == RunClass::Trains ? "trains" : "undecided";
}
size_t on_claims_side(const std::vector<Record>& runs, const Arm& a) {
  return size_t(std::count_if(runs.begin(), runs.end(), [&](const Record& r) {
    return classify(final_loss(r)) == (a.expects_stuck ? RunClass::Stuck : RunClass::Trains);
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

/// One run's record with its training curve, under the arm's name, for the picture and the page.
Job rescue_job(const Context& c, const charlm::RunOptions& o, const Arm& a) {
  const Record keys = Record().set("arm", a.id).set("warmup", double(o.trainer.warmup));
  return {charlm_job(c, o).cost, [&c, o, keys, a] {
            std::optional<apps::RunLog> log;
            Record r = charlm_record(c, o, keys, [&](charlm::RunResult& run) {
              log = charlm::run_log(o, run, int64_t(c.words.train.size()));
              log->name = a.id;
            });
            r.curves = log;
            return std::vector<Record>{r};
          }};
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
    return cat("charlm (apps/charlm) on the word list, width ", width(s), ", ", layers(s),
               " layers, 4 heads, makemore's initialization; AdamW (lr ", plain(kLr),
               ", weight decay 0.01, betas 0.9, 0.99) for ", steps(s),
               " steps of 32 words: post-LN (LayerNorm after each residual sum) without a warmup and with a linear "
               "warmup from 1% of the lr over the first ",
               warmup_steps(s),
               " steps, pre-LN (LayerNorm before each sublayer, with a final norm) without one; the validation loss in "
               "eval mode at the end of each run. The cell of warmup_depth's map where post-LN without a warmup was "
               "stuck for some seeds only, trained three times as long",
               quick_note(s, cat("width 32, 2 layers, ", steps(s), " steps and one seed")));
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
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (const Arm& arm : kArms)
      for (uint64_t seed : c.settings.seeds) {
        charlm::RunOptions o = charlm_training(c.settings, steps(c.settings), steps(c.settings));
        o.model.width = width(c.settings);
        o.model.layers = layers(c.settings);
        o.model.position = arm.position;
        o.lr = kLr;
        o.trainer.warmup = arm.warm ? warmup_steps(c.settings) : 0;
        o.seed = seed;
        jobs.push_back(rescue_job(c, o, arm));
      }
    return jobs;
  }
  Decision decide(const std::vector<Record>& records, const Settings& s) const override {
    std::vector<Truth> arms;
    std::string counts, undecided;
    for (const Arm& a : kArms) {
      const auto mine = runs_of(records, a);
      arms.push_back(agrees(mine, a));
      counts += cat(counts.empty() ? "" : "; ", arm_name(a, s), ": ", on_claims_side(mine, a), " of ", mine.size(),
                    a.expects_stuck ? " stuck" : " train", " (", said(arms.back(), "agrees", "disagrees"), ")");
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
    const std::string conditions =
        cat("charlm width ", width(s), ", ", layers(s), " layers, lr ", plain(kLr), ", ", steps(s), " steps");
    const std::string table =
        cat("Per arm (", conditions,
            "): the seeds on the claim's side, the classes, and the final validation loss (nats), mean [min, max] "
            "over seeds (a diverged run counting ln 27):\n\n",
            markdown_table({"arm", "on the claim's side", "stuck", "undecided", "trains", "validation loss"}, per_arm),
            "\nPer run:\n\n", markdown_table({"arm", "seed", "final validation loss", "class"}, per_seed));
    return {table, {draw(s.out_dir, "warmup_rescue.png", picture(records, s, conditions))}};
  }

 private:
  /// Left: each arm's training loss over steps (means of window(s) steps), mean over seeds with
  /// a min-max band. Right: each run's final validation loss against the rule's two lines.
  static std::string picture(const std::vector<Record>& records, const Settings& s, const std::string& conditions) {
    const char* colours[] = {"#d95f02", "#1b9e77", "#7570b3"};
    std::string curves, finals, script = two_panels("warmup_rescue.png", cat("Warmup and post-LN: ", conditions));
    std::vector<std::string> labels;
    for (size_t i = 0; i < std::size(kArms); ++i) {
      const Arm& a = kArms[i];
      const auto mine = runs_of(records, a);
      std::vector<std::vector<double>> band, dots;
      for (int64_t from = 0; from < steps(s); from += window(s)) {
        std::vector<double> means;  // per run that got this far: its mean loss over the window
        for (const Record& r : mine) {
          if (!r.curves || int64_t(r.curves->steps.size()) < from + window(s)) continue;
          double sum = 0.0;
          for (int64_t k = from; k < from + window(s); ++k) sum += r.curves->steps[size_t(k)].loss;
          means.push_back(sum / double(window(s)));
        }
        if (means.empty()) break;
        const auto [low, high] = std::minmax_element(means.begin(), means.end());
        double mean = 0.0;
        for (double m : means) mean += m / double(means.size());
        band.push_back({double(from + window(s)), mean, *low, *high});
      }
      for (const Record& r : mine) dots.push_back({double(i) + 0.04 * (r.num("seed") - 2.0), final_loss(r)});
      script += datablock(cat("c", i), band.empty() ? std::vector<std::vector<double>>{{0, 0, 0, 0}} : band) +
                datablock(cat("f", i), dots);
      const std::string style = cat(" lc rgb '", colours[i], "'");
      curves += cat(i ? ", " : "", "$c", i, " using 1:3:4 with filledcurves fs transparent solid 0.2 noborder", style,
                    " notitle, $c", i, " using 1:2 with lines lw 2", style, " title '", arm_name(a, s), "'");
      finals += cat(i ? ", " : "", "$f", i, " using 1:2 with points pt 7 ps 1.5", style, " notitle");
      labels.push_back(arm_name(a, s));
    }
    script += cat("set title 'training loss (means of ", window(s),
                  " steps; mean over seeds, band min to max)'\nset xlabel 'step'\nset ylabel 'nats'\nset key top "
                  "right\nplot ",
                  curves, "\n");
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
