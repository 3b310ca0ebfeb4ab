#include "run_logs.hpp"

#include "minidl/io/atomic_file.hpp"
#include "report_page.hpp"
#include "runs/run_stats.hpp"
#include "runs/seeds.hpp"
#include "summary.hpp"
#include "tensorboard_logs.hpp"
#include "training/lr_trace.hpp"

namespace minidl::digits {

std::vector<apps::RunLog> run_logs(const Settings& s, const std::vector<lesson::RunResult>& results,
                                   int64_t train_examples) {
  const lesson::TrainOptions& t = s.train;
  const int64_t per_epoch = lesson::steps_per_epoch(train_examples, t.batch_size, t.drop_last);
  const int64_t total_steps = t.steps ? *t.steps : t.epochs * per_epoch;
  std::vector<apps::RunLog> logs;
  for (const lesson::RunResult& r : results) {
    apps::RunLog& log = logs.emplace_back(apps::RunLog{.name = lesson::short_name(r.norm), .seed = r.seed});
    const std::vector<double> lrs = lesson::lr_trace(t.trainer, t.lr, total_steps, per_epoch, int64_t(r.curve.size()));
    for (size_t i = 0; i < r.curve.size(); ++i) log.steps.push_back({r.curve[i].step, r.curve[i].loss, lrs[i]});
    for (const lesson::EpochValidation& v : r.validation) log.evals.push_back({v.step, v.loss, v.accuracy});
    if (!r.stats.rows.empty()) log.stats = &r.stats;
  }
  return logs;
}

std::string results_text(const Settings& s, const std::vector<lesson::RunResult>& results) {
  if (s.seeds.size() > 1) return lesson::seed_table(results, s.norms, s.seeds);
  std::string text;
  for (const lesson::RunResult& result : results) text += lesson::summary_line(result) + "\n";
  return text;
}

void write_comparisons(const Settings& s, const std::vector<lesson::RunResult>& results, int64_t train_examples) {
  const std::vector<apps::RunLog> logs = run_logs(s, results, train_examples);
  if (!s.tensorboard.empty())
    apps::write_tensorboard(s.tensorboard, logs, apps::settings_markdown(summary_json(s, results, 0)));
  if (!s.report.empty())
    io::write_file_atomically(s.report, apps::report_page("digits: " + lesson::arch_name(s.train.model.arch), logs,
                                                          results_text(s, results)));
}

}  // namespace minidl::digits
