#include "run_logs.hpp"

#include "minidl/io/atomic_file.hpp"
#include "report.hpp"
#include "report_page.hpp"
#include "tensorboard_logs.hpp"
#include "training/lr_trace.hpp"

namespace minidl::charlm {

std::vector<apps::RunLog> run_logs(const Settings& s, const std::vector<RunResult>& results, int64_t train_words) {
  const RunOptions& o = s.run;
  std::vector<apps::RunLog> logs;
  for (const RunResult& r : results) {
    apps::RunLog& log = logs.emplace_back(apps::RunLog{.name = run_name(r.norm, r.position), .seed = r.seed});
    const std::vector<double> lrs =
        lesson::lr_trace(o.trainer, o.lr, o.steps, steps_per_epoch(train_words, o.batch_size), int64_t(r.curve.size()));
    for (size_t i = 0; i < r.curve.size(); ++i) log.steps.push_back({int64_t(i) + 1, r.curve[i], lrs[i]});
    for (const ValPoint& v : r.val_curve) log.evals.push_back({v.step, v.loss, std::nullopt});
    if (!r.stats.rows.empty()) log.stats = &r.stats;
  }
  return logs;
}

void write_comparisons(const Settings& s, const std::vector<RunResult>& results, int64_t train_words) {
  const std::vector<apps::RunLog> logs = run_logs(s, results, train_words);
  if (!s.tensorboard.empty())
    apps::write_tensorboard(s.tensorboard, logs, apps::settings_markdown(summary_json(s, results, 0)));
  if (!s.report.empty())
    io::write_file_atomically(s.report, apps::report_page("charlm", logs, results_table(s, results)));
}

}  // namespace minidl::charlm
