#pragma once
// What the training experiments share: the lesson's runs over a grid of one knob x norms x
// seeds, and the table and picture of a figure over that grid, a row and a line per norm.
#include <functional>
#include <string>
#include <vector>

#include "tools.hpp"

namespace minidl::lab {

/// The lesson's training (lesson_training) of norm from seed.
lesson::TrainOptions lesson_run(const Settings& settings, lesson::NormKind norm, uint64_t seed);

/// A train_job per value x norm x seed, in that order: lesson_run with set(options, value),
/// its record keyed by `keys` and then key = value.
std::vector<Job> grid_jobs(const Context& context, const Record& keys, const std::string& key,
                           const std::vector<double>& values, const std::vector<lesson::NormKind>& norms,
                           const std::vector<uint64_t>& seeds,
                           const std::function<void(lesson::TrainOptions&, double)>& set);

/// The records of one norm.
std::vector<Record> of_norm(const std::vector<Record>& records, lesson::NormKind norm);

/// A figure over a grid, per norm: what grid_table shows of it.
struct GridPlot {
  std::string key;  // the records' field of the grid's value
  std::vector<double> values;
  std::string figure;                                           // the field the picture shows
  std::function<std::string(const std::vector<Record>&)> cell;  // a value's records -> its table cell
  std::string prefix = "n";                                     // of the datablocks' names
  double shift = 0.03;                                          // the i-th norm's points sit at value * (1 + shift * i)
  std::string columns = "2:3:4";          // gnuplot's y, ylow, yhigh of a series (value, mean, min, max)
  lesson::Arch arch = lesson::Arch::MLP;  // whose norm names
};
/// Per norm a table row (the norm's name, then a cell per value) and a picture's series
/// ("$<prefix><i>") with its plot clause; the shift keeps the norms' error bars apart.
struct GridTable {
  std::vector<std::vector<std::string>> rows;
  std::string blocks;  // the datablocks
  std::string plot;    // "plot $n0 using ($1*1):2:3:4 with ..., ..."
};
GridTable grid_table(const std::vector<Record>& records, const std::vector<lesson::NormKind>& norms,
                     const GridPlot& plot);

/// "N of M norms <what>, K within the margin": how many parts are surely Yes and how many unsure.
std::string count_text(const std::vector<Truth>& parts, const std::string& what);

/// The validation accuracy of runs against threshold, a run that did not finish counting as
/// failed_as, with the accuracy floor.
Comparison accuracy_against(const std::vector<Record>& runs, double threshold, double failed_as);
/// Seed by seed, the validation accuracy of runs a minus that of runs b (a run that did not
/// finish counting as failed_as) against threshold, with the accuracy floor.
Comparison accuracy_gain(const std::vector<Record>& a, const std::vector<Record>& b, double threshold,
                         double failed_as = 0.0);
/// A grid cell of validation accuracy: mean [min, max] with 2 digits and the diverged runs, or
/// "refused" when every run was refused.
std::string accuracy_cell(const std::vector<Record>& at);

/// " (N diverged)", or "" for none.
std::string diverged_note(size_t diverged);

}  // namespace minidl::lab
