#include "grid.hpp"

#include <algorithm>

#include "minidl/tensor/error.hpp"

namespace minidl::lab {

using lesson::NormKind;

lesson::TrainOptions lesson_run(const Settings& settings, NormKind norm, uint64_t seed) {
  lesson::TrainOptions options = lesson_training(settings);
  options.norm = norm;
  options.seed = seed;
  return options;
}

std::vector<Job> grid_jobs(const Context& context, const Record& keys, const std::string& key,
                           const std::vector<double>& values, const std::vector<NormKind>& norms,
                           const std::vector<uint64_t>& seeds,
                           const std::function<void(lesson::TrainOptions&, double)>& set) {
  std::vector<Job> jobs;
  for (double value : values)
    for (NormKind norm : norms)
      for (uint64_t seed : seeds) {
        lesson::TrainOptions options = lesson_run(context.settings, norm, seed);
        set(options, value);
        jobs.push_back(train_job(context, options, Record(keys).set(key, value)));
      }
  return jobs;
}

std::vector<Record> of_norm(const std::vector<Record>& records, NormKind norm) {
  return where(records, {{"norm", lesson::short_name(norm)}});
}

GridTable grid_table(const std::vector<Record>& records, const std::vector<NormKind>& norms, const GridPlot& plot) {
  GridTable out;
  for (size_t i = 0; i < norms.size(); ++i) {
    const std::vector<Record> mine = of_norm(records, norms[i]);
    const std::string name = lesson::display_name(norms[i], plot.arch);
    std::vector<std::string> row{name};
    for (double value : plot.values) row.push_back(plot.cell(where_num(mine, plot.key, value)));
    out.rows.push_back(row);
    out.blocks += series_block(cat(plot.prefix, i), mine, plot.key, plot.values, plot.figure);
    const std::string line =
        plot.arch == lesson::Arch::CNN ? cat("with yerrorlines lw 2 title '", name, "'") : norm_line(norms[i]);
    out.plot += cat(i ? ", " : "plot ", "$", plot.prefix, i, " using ($1*", 1.0 + plot.shift * double(i),
                    "):", plot.columns, " ", line);
  }
  return out;
}

std::string count_text(const std::vector<Truth>& parts, const std::string& what) {
  return cat(std::count(parts.begin(), parts.end(), Truth::Yes), " of ", parts.size(), " norms ", what, ", ",
             std::count(parts.begin(), parts.end(), Truth::Unsure), " within the margin");
}

Comparison accuracy_against(const std::vector<Record>& runs, double threshold, double failed_as) {
  return compare_to_threshold(values_counting_failures(runs, "val_accuracy", failed_as), threshold, kAccuracyFloor);
}

Comparison accuracy_gain(const std::vector<Record>& a, const std::vector<Record>& b, double threshold,
                         double failed_as) {
  return compare_to_threshold(paired_differences(a, b, "val_accuracy", failed_as), threshold, kAccuracyFloor);
}

std::string accuracy_cell(const std::vector<Record>& at) {
  if (count_status(at, "refused") == at.size()) return "refused";
  return mean_range(spread(at, "val_accuracy"), 2) + diverged_note(count_status(at, "diverged"));
}

std::string diverged_note(size_t diverged) { return diverged ? cat(" (", diverged, " diverged)") : ""; }

}  // namespace minidl::lab
