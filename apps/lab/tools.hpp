#pragma once
// What experiments share: a training run as a record, figures over seeds, Markdown tables
// and gnuplot pictures (and the headers every experiment uses).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lab.hpp"
#include "minidl/autograd/grad_mode.hpp"
#include "minidl/tensor/error.hpp"
#include "runs/seeds.hpp"
#include "training/digits_train.hpp"

namespace minidl::lab {

/// Trains one run and returns its record: the given keys, then norm, seed, status ("ok",
/// "diverged", "refused" or "failed"), steps, train_loss, val_loss, val_accuracy (NaN when the
/// run did not finish).
Record train_record(const Context& context, const lesson::TrainOptions& options, Record keys = {});
/// A job for train_record, its cost the examples it trains on.
Job train_job(const Context& context, const lesson::TrainOptions& options, Record keys = {});

/// Trains one run: its result and status ("ok", "diverged", or "failed" when it threw).
std::pair<lesson::RunResult, std::string> trained(const Context& context, const lesson::TrainOptions& options);

/// A job per seed, each of that cost, its records what measure(seed) returns (a Record or several).
template <typename Measure>
std::vector<Job> seed_jobs(const std::vector<uint64_t>& seeds, double cost, const Measure& measure) {
  std::vector<Job> jobs;
  for (uint64_t seed : seeds)
    jobs.push_back({cost, [measure, seed]() -> std::vector<Record> {
                      if constexpr (std::is_same_v<decltype(measure(seed)), Record>) return {measure(seed)};
                      else return measure(seed);
                    }});
  return jobs;
}
/// Moves the jobs of more to the end of jobs.
void append(std::vector<Job>& jobs, std::vector<Job> more);

/// The lesson's training (5 epochs; 1 with --quick).
lesson::TrainOptions lesson_training(const Settings& settings);

/// The norms the lesson's network is built with, in report order.
std::vector<lesson::NormKind> all_norms();

/// The records whose text field `key` equals `value` (and so on for each pair).
std::vector<Record> where(const std::vector<Record>& records,
                          const std::vector<std::pair<std::string, std::string>>& match);
/// The records whose number field `key` equals `value`.
std::vector<Record> where_num(const std::vector<Record>& records, const std::string& key, double value);
/// The spread over records of a figure (NaN values are left out; count says how many went in).
lesson::Spread spread(const std::vector<Record>& records, const std::string& figure);

/// The spread of a figure over records, a run that did not finish counting as `failed_as`.
lesson::Spread spread_counting_failures(const std::vector<Record>& records, const std::string& figure,
                                        double failed_as);
/// The figure of each record.
std::vector<double> values_of(const std::vector<Record>& records, const std::string& figure);
/// The figure of each record, a run that did not finish (NaN) counting as `failed_as`.
std::vector<double> values_counting_failures(const std::vector<Record>& records, const std::string& figure,
                                             double failed_as);
/// Per seed, a's figure minus b's (a run that did not finish counting as `failed_as`), the
/// records matched by their "seed" field; throws naming a seed that one side lacks.
std::vector<double> paired_differences(const std::vector<Record>& a, const std::vector<Record>& b,
                                       const std::string& figure, double failed_as);
/// How many of the records have that status ("ok", "diverged", "refused", "failed").
size_t count_status(const std::vector<Record>& records, const std::string& status);
/// Per norm, a line "$name x mean min max" per value of the key, for plotting against it.
std::string series_block(const std::string& name, const std::vector<Record>& records, const std::string& key,
                         const std::vector<double>& keys, const std::string& figure);
/// "0.961 [0.950, 0.970]" (mean and range), "n/a" when no value went in; digits after the point.
std::string mean_range(const lesson::Spread& s, int digits = 3);
/// A number with that many digits after the point, or "n/a" for NaN.
std::string fixed(double value, int digits = 3);
/// A number as the shortest text that reads back the same ("0.05", "2").
std::string plain(double value);

/// The values as plain() writes them, comma separated ("0.05, 1").
template <typename T>
std::string joined(const std::vector<T>& values) {
  std::string text;
  for (const T& v : values) text += (text.empty() ? "" : ", ") + plain(double(v));
  return text;
}
/// A number with two significant digits ("1.2e-07").
std::string sci(double value);

/// A grid table's header: first, then prefix + plain(value) for each value.
std::vector<std::string> grid_header(const std::string& first, const std::string& prefix,
                                     const std::vector<double>& values);
/// A Markdown table.
std::string markdown_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

/// The whole file as text; "" when it cannot be read.
std::string read_file(const std::string& path);

/// True when `gnuplot --version` runs.
bool gnuplot_available();
/// Runs gnuplot on script (which refers to its output as the PNG named) in out_dir, writing
/// the PNG there, and returns png; throws naming the picture and gnuplot's exit status when it fails.
std::string draw(const std::string& out_dir, const std::string& png, const std::string& script);
/// The script's opening: a pngcairo terminal of that size writing png, with a grid.
std::string plot_header(const std::string& png, int width = 900, int height = 540);
/// The script's opening for two panels side by side under one title.
std::string two_panels(const std::string& png, const std::string& title, int width = 1100, int height = 480);
/// Draws png into out_dir from plot_header(png, width, height) and then body; returns png.
std::string draw_plot(const std::string& out_dir, const std::string& png, const std::string& body, int width = 900,
                      int height = 540);
/// Draws png into out_dir from `panels` panels side by side under one title: the opening, body,
/// then the multiplot's end; returns png.
std::string draw_panels(const std::string& out_dir, const std::string& png, const std::string& title,
                        const std::string& body, int panels = 2, int width = 1100, int height = 480);
/// GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces as '-'.
std::string anchor(const std::string& heading);
/// " with yerrorlines lw 2 lc rgb '#...' title 'LayerNorm'": one colour per norm in every picture.
std::string norm_line(lesson::NormKind norm);
/// gnuplot's tic labels: "'a' 0, 'b' 1", each label in `quote` marks.
std::string xtics(const std::vector<std::string>& labels, const std::string& quote = "\"");
/// A gnuplot datablock "$name << EOD ... EOD" holding rows of space-separated columns.
std::string datablock(const std::string& name, const std::vector<std::vector<double>>& rows);

// ---- Verdicts with a margin ----
// A figure of chaotic training runs moves with the summation order of the BLAS kernel the CPU
// picks, so no rule decides on which side of a threshold a figure sits when it is within its
// margin of it: the larger of kStandardErrors standard errors of the mean over seeds and a
// floor the rule names. With one seed (--quick) the standard error is undefined and the floor
// alone is the margin. A margin from five seeds cannot save a threshold that cuts through the
// seeds themselves (one kernel's seeds all above it, another's straddling it): such a rule
// draws its line away from every set-up's figures instead (depth's "learns").

/// How many standard errors of the mean over seeds a margin spans.
constexpr double kStandardErrors = 2.0;
/// The floors the training experiments use: 0.02 of accuracy is 7 of the 360 validation
/// examples; 0.05 of loss is about 2% of guessing's ln 10.
constexpr double kAccuracyFloor = 0.02;
constexpr double kLossFloor = 0.05;

enum class Side { Below, Within, Above };
struct Comparison {
  Side side = Side::Within;
  double mean = 0.0;    // of the finite values
  double margin = 0.0;  // max(floor, kStandardErrors * sd / sqrt(count)); the floor alone for one value
};
/// The mean of the values (NaN left out) against threshold: Above or Below when it is more than
/// the margin away, else Within. Throws when no value is finite or the floor is not positive.
Comparison compare_to_threshold(const std::vector<double>& values, double threshold, double floor);
/// The sentence every rule ends with: how wide the margin is (floors names the rule's floors,
/// "0.02 of accuracy") and what a figure within it does.
std::string margin_rule(const std::string& floors);
/// "0.889 +- 0.058": the mean and its margin.
std::string comparison_text(const Comparison& c, int digits = 3);

/// A part of a rule: yes, no, or unsure when a comparison it rests on is within its margin.
enum class Truth { No, Unsure, Yes };
Truth above(const Comparison& c);  // Yes when Above, No when Below, Unsure when Within
Truth below(const Comparison& c);  // Yes when Below, No when Above, Unsure when Within
Truth negation(Truth t);
Truth all_of(const std::vector<Truth>& parts);  // No when any is No, else Unsure when any is
Truth any_of(const std::vector<Truth>& parts);  // Yes when any is Yes, else Unsure when any is
/// Yes or No: a part that rests on an exact count or check.
Truth truth_of(bool holds);
/// The sentence the rules of exact checks end with: why they compare without a margin.
std::string exact_rule();
/// The text for yes or no, or "within the margin" when unsure.
std::string truth_text(Truth t, const std::string& yes, const std::string& no);
/// Held when every part is Yes, did not hold when every part is No, held partly when some are
/// Yes and some No, inconclusive when an unsure part could tip it either way. Throws when
/// there are no parts.
Verdict verdict_of(const std::vector<Truth>& parts);

/// A figure built from unsure parts (a count of cells, the largest lr reaching a target), known
/// to lie between low (every unsure part counted against it) and high (for it).
struct Bounds {
  double low = 0.0, high = 0.0;
};
Truth greater(const Bounds& a, const Bounds& b);  // Yes when a.low > b.high, No when a.high <= b.low

}  // namespace minidl::lab
