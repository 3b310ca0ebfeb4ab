#include "warmup_runs.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace minidl::lab::warmup {

using charlm::Position;

const Arm kArms[3] = {{"post_no_warmup", Position::Post, false},
                      {"post_warmup", Position::Post, true},
                      {"pre_no_warmup", Position::Pre, false}};
const char* const kColours[3] = {"#d95f02", "#1b9e77", "#7570b3"};

namespace {
int64_t window(const Settings& s) { return s.quick ? 2 : 10; }  // steps per point of the curves

/// One run's record with the cell's keys, and its training curve under the arm's name when `curves`.
Job arm_job(const Context& c, const charlm::RunOptions& o, const Arm& a, bool curves) {
  const Record keys{{"arm", a.id},
                    {"width", double(o.model.width)},
                    {"layers", double(o.model.layers)},
                    {"lr", o.lr},
                    {"warmup", double(o.trainer.warmup)}};
  return {charlm_job(c, o).cost, [&c, o, keys, a, curves] {
            std::optional<apps::RunLog> log;
            Record r = charlm_record(c, o, keys, [&](charlm::RunResult& run) {
              if (!curves) return;
              log = charlm::run_log(o, run, int64_t(c.words.train.size()));
              log->name = a.id;
            });
            r.curves = log;
            return std::vector<Record>{r};
          }};
}
}  // namespace

int64_t steps(const Settings& s) { return s.quick ? 6 : 300; }
int64_t warmup_steps(const Settings& s) { return s.quick ? 3 : 50; }

std::string arm_name(const Arm& a, const Settings& s) {
  return cat(charlm::short_name(a.position), "-LN, ", a.warm ? cat(warmup_steps(s), "-step warmup") : "no warmup");
}
std::string cell_name(const Cell& c) { return cat("width ", c.width, ", ", c.layers, " layers, lr ", plain(c.lr)); }
std::vector<Record> runs_of(const std::vector<Record>& records, const Arm& a) {
  return where(records, {{"arm", a.id}});
}
std::vector<Record> runs_of(const std::vector<Record>& records, const Cell& c, const Arm& a) {
  return where_num(where_num(where_num(runs_of(records, a), "width", double(c.width)), "layers", double(c.layers)),
                   "lr", c.lr);
}
double final_loss(const Record& r) { return std::isnan(r.num("val_loss")) ? kUniformLoss : r.num("val_loss"); }
std::vector<double> against_warm(const std::vector<Record>& arm_runs, const std::vector<Record>& warm_runs) {
  return paired_differences(arm_runs, warm_runs, "val_loss", kUniformLoss);
}

std::string training_text(const Settings& s) {
  return cat("4 heads, makemore's initialization; AdamW (weight decay 0.01, betas 0.9, 0.99) for ", steps(s),
             " steps of 32 words: post-LN (LayerNorm after each residual sum) without a warmup and with a linear "
             "warmup from 1% of the lr over the first ",
             warmup_steps(s),
             " steps, pre-LN (LayerNorm before each sublayer, with a final norm) without one; the validation loss in "
             "eval mode at the end of each run (a run whose loss turned NaN or infinite diverged and counts as "
             "guessing, ln 27 = ",
             fixed(kUniformLoss), " nats)");
}

std::vector<Job> jobs(const Context& c, const Cell& cell, const std::vector<uint64_t>& seeds, bool curves) {
  std::vector<Job> jobs;
  for (const Arm& arm : kArms)
    for (uint64_t seed : seeds) {
      charlm::RunOptions o = charlm_training(c.settings, steps(c.settings), steps(c.settings));
      o.model.width = cell.width;
      o.model.layers = cell.layers;
      o.model.position = arm.position;
      o.lr = cell.lr;
      o.trainer.warmup = arm.warm ? warmup_steps(c.settings) : 0;
      o.seed = seed;
      jobs.push_back(arm_job(c, o, arm, curves));
    }
  return jobs;
}

std::string loss_curves_panel(const std::vector<Record>& records, const Settings& s) {
  std::string script, curves;
  for (size_t i = 0; i < std::size(kArms); ++i) {
    std::vector<std::vector<double>> band;
    const auto mine = runs_of(records, kArms[i]);
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
    script += datablock(cat("c", i), band.empty() ? std::vector<std::vector<double>>{{0, 0, 0, 0}} : band);
    const std::string style = cat(" lc rgb '", kColours[i], "'");
    curves += cat(i ? ", " : "", "$c", i, " using 1:3:4 with filledcurves fs transparent solid 0.2 noborder", style,
                  " notitle, $c", i, " using 1:2 with lines lw 2", style, " title '", arm_name(kArms[i], s), "'");
  }
  return script + cat("set title 'training loss (means of ", window(s),
                      " steps; mean over seeds, band min to max)'\nset xlabel 'step'\nset ylabel 'nats'\nset key top "
                      "right\nplot ",
                      curves, "\n");
}

}  // namespace minidl::lab::warmup
