#include "tensorboard_logs.hpp"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "minidl/io/event_writer.hpp"
#include "minidl/tensor/error.hpp"

namespace fs = std::filesystem;

namespace minidl::apps {

namespace {

void remove_event_files(const fs::path& dir) {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error))
    if (entry.path().filename().string().starts_with("events.out.tfevents.")) fs::remove(entry.path(), error);
}

// The bins of one snapshot's histogram (rows [first, last)) as TensorBoard's HistogramProto:
// each bucket holds its bin's share of the values (density x width), so num is 1.
io::HistogramSummary bins_to_histogram(const diagnostics::StatsRow* first, const diagnostics::StatsRow* last) {
  io::HistogramSummary h{.min = first->low, .max = (last - 1)->high};
  for (const diagnostics::StatsRow* bin = first; bin != last; ++bin) {
    const double share = bin->value * (bin->high - bin->low), center = 0.5 * (bin->low + bin->high);
    h.bucket_limit.push_back(bin->high);
    h.bucket.push_back(share);
    h.num += share;
    h.sum += share * center;
    h.sum_squares += share * center * center;
  }
  return h;
}

void add_histograms(io::EventWriter& log, const diagnostics::StatsLog& stats) {
  const std::vector<diagnostics::StatsRow>& rows = stats.rows;
  for (size_t i = 0; i < rows.size();) {
    size_t end = i;
    while (end < rows.size() && rows[end].statistic == "bin" && rows[end].step == rows[i].step &&
           rows[end].layer == rows[i].layer && rows[end].quantity == rows[i].quantity)
      ++end;
    if (end > i)
      log.add_histogram(cat(rows[i].layer, "/", rows[i].quantity), rows[i].step,
                        bins_to_histogram(&rows[i], rows.data() + end));
    i = std::max(end, i + 1);
  }
}

}  // namespace

void write_tensorboard(const std::string& dir, const std::vector<RunLog>& runs, const std::string& settings_markdown) {
  for (const RunLog& run : runs) {
    const fs::path run_dir = fs::path(dir) / run.name / cat("seed", run.seed);
    remove_event_files(run_dir);
    io::EventWriter log(run_dir.string());
    log.add_text("settings", 0, settings_markdown);
    for (const StepPoint& point : run.steps) {
      log.add_scalar("train/loss", point.step, point.loss);
      log.add_scalar("train/lr", point.step, float(point.lr));
    }
    for (const EvalPoint& eval : run.evals) {
      log.add_scalar("val/loss", eval.step, eval.loss);
      if (eval.accuracy) log.add_scalar("val/accuracy", eval.step, *eval.accuracy);
    }
    if (run.stats) add_histograms(log, *run.stats);
    log.flush();
  }
}

std::string settings_markdown(const std::string& summary_json) {
  const auto summary = nlohmann::ordered_json::parse(summary_json);
  std::istringstream lines(summary.at("settings").dump(2));
  std::string markdown;
  for (std::string line; std::getline(lines, line);) markdown += "    " + line + "\n";
  return markdown;
}

}  // namespace minidl::apps
