#include "run_logs.hpp"

#include "minidl/io/atomic_file.hpp"
#include "report.hpp"
#include "report_page.hpp"
#include "tensorboard_logs.hpp"

namespace minidl::charlm {

std::vector<apps::RunLog> run_logs(const Settings& s, const std::vector<RunResult>& results, int64_t train_words) {
  std::vector<apps::RunLog> logs;
  for (const RunResult& r : results) {
    apps::RunLog& log = logs.emplace_back(run_log(s.run, r, train_words));
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
