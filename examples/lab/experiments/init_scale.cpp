// 3. Starting weights: "they make training less sensitive to the starting weights".
#include <algorithm>
#include <cmath>

#include "experiments.hpp"
#include "minidl/tensor/error.hpp"
#include "tools.hpp"

namespace minidl::lab {

namespace {

using lesson::NormKind;

std::vector<double> scales(const Settings& s) {
  if (s.quick) return {0.5, 2.0};
  return {0.25, 0.5, 1.0, 2.0, 4.0};
}

class InitScale : public Experiment {
 public:
  std::string name() const override { return "init_scale"; }
  std::string title() const override { return "Starting weights"; }
  std::string claim() const override { return "norm layers make training less sensitive to the starting weights"; }
  std::string source() const override { return "lesson, \"A network that only trains with it\""; }
  std::string setup(const Settings& s) const override {
    std::string list;
    for (double k : scales(s)) list += (list.empty() ? "" : ", ") + plain(k);
    return cat("The lesson's network with every Linear's initial weight multiplied by ", list,
               " (biases as drawn), x the five norms; the lesson's training (", lesson_training(s).epochs,
               " epoch(s)).");
  }
  std::string rule() const override {
    return "per norm, the sensitivity is the range (max - min) of the final training loss over every scale and "
           "seed, a diverged run counting as a loss of 2.303 (guessing). Held: every norm's range is smaller than "
           "that of the network without a norm; held partly: some norms' are; did not hold: none is.";
  }
  std::vector<Job> plan(const Context& c) const override {
    std::vector<Job> jobs;
    for (double scale : scales(c.settings))
      for (NormKind norm : all_norms())
        for (uint64_t seed : c.settings.seeds) {
          lesson::TrainOptions o = lesson_training(c.settings);
          o.norm = norm;
          o.seed = seed;
          o.net.init_scale = scale;
          jobs.push_back(train_job(c, o, Record().set("init_scale", scale)));
        }
    return jobs;
  }
  Outcome judge(const std::vector<Record>& records, const Settings& s) const override {
    Outcome out;
    std::vector<std::vector<std::string>> rows;
    std::string script = plot_header("init_scale.png", 900, 520);
    script +=
        "set title 'Starting weights: final training loss by initial weight scale (mean and range over seeds)'\n"
        "set logscale x 2\nset xlabel 'initial weight scale'\nset ylabel 'training loss'\nset key top left\n"
        "set xrange [0.2:5]\n";
    std::string plots, summary;
    double none_range = 0.0;
    std::vector<double> ranges;
    const auto norms = all_norms();
    for (size_t i = 0; i < norms.size(); ++i) {
      const auto mine = where(records, {{"norm", lesson::short_name(norms[i])}});
      double low = INFINITY, high = -INFINITY;
      for (const Record& r : mine) {
        const double loss = std::isnan(r.num("train_loss")) ? std::log(10.0) : r.num("train_loss");
        low = std::min(low, loss);
        high = std::max(high, loss);
      }
      const double range = high - low;
      ranges.push_back(range);
      if (norms[i] == NormKind::None) none_range = range;
      std::vector<std::string> row{lesson::display_name(norms[i])};
      for (double k : scales(s)) row.push_back(mean_range(spread(where_num(mine, "init_scale", k), "train_loss")));
      row.push_back(fixed(range));
      rows.push_back(row);
      summary += cat(i ? ", " : "", lesson::display_name(norms[i]), " ", fixed(range));
      script += series_block(cat("n", i), mine, "init_scale", scales(s), "train_loss");
      plots += cat(i ? ", " : "plot ", "$n", i, " using ($1*", 1.0 + 0.03 * double(i), "):2:3:4 ", norm_line(norms[i]));
    }
    draw(s.out_dir, "init_scale.png", script + plots + "\n");
    out.pictures = {"init_scale.png"};
    std::vector<std::string> header{"norm"};
    for (double k : scales(s)) header.push_back("scale " + plain(k));
    header.push_back("range over all");
    out.table = "Final training loss, mean [min, max] over seeds, and its range over every scale and seed:\n\n" +
                markdown_table(header, rows);
    size_t less = 0;
    for (size_t i = 1; i < ranges.size(); ++i) less += ranges[i] < none_range;
    out.verdict = less == ranges.size() - 1 ? Verdict::Held : less > 0 ? Verdict::HeldPartly : Verdict::DidNotHold;
    out.why = cat("Range of the final training loss: ", summary, "; ", less, " of ", ranges.size() - 1,
                  " norms are less sensitive than the network without one.");
    return out;
  }
};

}  // namespace

std::shared_ptr<const Experiment> init_scale_experiment() { return std::make_shared<InitScale>(); }

}  // namespace minidl::lab
