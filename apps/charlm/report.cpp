#include "report.hpp"

#include <nlohmann/json.hpp>

#include "program.hpp"
#include "runs/seeds.hpp"
#include "training/digits_train.hpp"

namespace minidl::charlm {

using lesson::padded;

namespace {

// "2.105 [2.091, 2.120]", or "-" when no run finished.
std::string spread_text(const std::vector<double>& values) {
  return lesson::spread_text(lesson::spread_of(values), "-");
}

}  // namespace

std::string results_table(const Settings& s, const std::vector<RunResult>& results) {
  std::string table = cat("over seeds ", lesson::seeds_text(s.seeds), ": mean [min, max]\n");
  table += padded("run", 18) + padded("train loss", 26) + "val loss\n";
  for (NormKind norm : s.norms)
    for (Position position : s.positions) {
      std::vector<double> train, val;
      size_t runs = 0;
      for (const RunResult& r : results)
        if (r.norm == norm && r.position == position) {
          ++runs;
          train.push_back(r.train_loss);
          val.push_back(r.val_loss);
        }
      std::string line = padded(run_name(norm, position), 18) + padded(spread_text(train), 26) + spread_text(val);
      const size_t finished = lesson::spread_of(val).count;
      if (finished < runs) line += cat("   (", runs - finished, " of ", runs, " runs did not finish)");
      table += line + "\n";
    }
  return table;
}

std::string curves_csv(const std::vector<RunResult>& results) {
  std::string csv = "run,seed,step,loss\n";
  for (const RunResult& r : results)
    for (size_t i = 0; i < r.curve.size(); ++i)
      csv += cat(run_name(r.norm, r.position), ",", r.seed, ",", i + 1, ",", lesson::exact_text(r.curve[i]), "\n");
  return csv;
}

std::string val_curves_csv(const std::vector<RunResult>& results) {
  std::string csv = "run,seed,step,val_loss\n";
  for (const RunResult& r : results)
    for (const ValPoint& point : r.val_curve)
      csv += cat(run_name(r.norm, r.position), ",", r.seed, ",", point.step, ",", lesson::exact_text(point.loss), "\n");
  return csv;
}

std::string summary_json(const Settings& s, const std::vector<RunResult>& results, int stop_signal) {
  using json = nlohmann::ordered_json;
  json runs = json::array();
  for (const RunResult& r : results)  // NaN figures come out as null
    runs.push_back({{"norm", short_name(r.norm)},
                    {"position", short_name(r.position)},
                    {"seed", r.seed},
                    {"train_loss", r.train_loss},
                    {"val_loss", r.val_loss},
                    {"seconds", r.seconds},
                    {"steps", r.curve.size()},
                    {"interrupted", r.interrupted},
                    {"error", r.failure ? json(*r.failure) : json()}});
  const RunOptions& o = s.run;
  json settings = {{"data", s.data_file},          {"steps", o.steps},
                   {"batch_size", o.batch_size},   {"lr", o.lr},
                   {"warmup", o.trainer.warmup},   {"schedule", lesson::short_name(o.trainer.schedule)},
                   {"layers", o.model.layers},     {"heads", o.model.heads},
                   {"width", o.model.width},       {"block_size", o.model.block_size},
                   {"eval_every", o.eval_every},   {"seeds", s.seeds},
                   {"init_from", s.init_from_dir}, {"batch_order", s.batch_order}};
  settings["init"] = short_name(o.model.init);
  return apps::summary_json(s, settings, stop_signal, {{"runs", runs}});
}

std::vector<apps::RunLog> run_logs(const Settings& s, const std::vector<RunResult>& results, int64_t train_words) {
  std::vector<apps::RunLog> logs;
  for (const RunResult& r : results) {
    apps::RunLog& log = logs.emplace_back(run_log(s.run, r, train_words));
    if (!r.stats.rows.empty()) log.stats = &r.stats;
  }
  return logs;
}

}  // namespace minidl::charlm
