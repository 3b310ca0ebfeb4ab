#include "report.hpp"

#include <array>
#include <nlohmann/json.hpp>

#include "program.hpp"
#include "runs/run_stats.hpp"
#include "runs/seeds.hpp"
#include "training/lr_trace.hpp"

namespace minidl::digits {

namespace {

nlohmann::ordered_json spread_json(const lesson::Spread& s) {
  if (s.count == 0) return nullptr;
  return {{"mean", s.mean}, {"sd", s.sd}, {"min", s.min}, {"max", s.max}};
}

// The trainer's setup with every default filled in, as the run used it.
nlohmann::ordered_json trainer_json(const lesson::TrainerSetup& t) {
  using lesson::OptimizerKind;
  const bool sgd = t.optimizer == OptimizerKind::Sgd;
  const double decay = t.weight_decay.value_or(t.optimizer == OptimizerKind::AdamW ? 1e-2 : 0.0);
  nlohmann::ordered_json out = {{"optimizer", lesson::short_name(t.optimizer)}};
  if (sgd) out["momentum"] = t.momentum.value_or(0.0);
  if (!sgd) out["betas"] = t.betas.value_or(std::array<double, 2>{0.9, 0.999});
  out["weight_decay"] = decay;
  out["warmup"] = t.warmup;
  out["warmup_start_factor"] = lesson::kWarmupStartFactor;
  out["schedule"] = lesson::short_name(t.schedule);
  out["clip"] = t.clip ? nlohmann::ordered_json(*t.clip) : nlohmann::ordered_json();
  return out;
}

}  // namespace

std::string results_text(const Settings& s, const std::vector<lesson::RunResult>& results) {
  if (s.seeds.size() > 1) return lesson::seed_table(results, s.norms, s.seeds);
  std::string text;
  for (const lesson::RunResult& result : results) text += lesson::summary_line(result) + "\n";
  return text;
}

std::string summary_json(const Settings& s, const std::vector<lesson::RunResult>& results, int stop_signal) {
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const lesson::RunResult& r : results)  // NaN figures of a run that did not finish come out as null
    runs.push_back({{"norm", lesson::short_name(r.norm)},
                    {"name", lesson::display_name(r.norm, r.arch)},
                    {"seed", r.seed},
                    {"train_loss", r.train_loss},
                    {"val_loss", r.val_loss},
                    {"val_accuracy", r.val_accuracy},
                    {"seconds", r.seconds},
                    {"steps", r.curve.size()},
                    {"interrupted", r.interrupted},
                    {"error", r.failure ? nlohmann::ordered_json(*r.failure) : nlohmann::ordered_json()}});
  nlohmann::ordered_json norms = nlohmann::ordered_json::array();
  for (const lesson::NormSpread& row : lesson::spreads_by_norm(results, s.norms, s.seeds))
    norms.push_back({{"norm", lesson::short_name(row.norm)},
                     {"name", lesson::display_name(row.norm, s.train.model.arch)},
                     {"runs", row.runs},
                     {"finished", row.train_loss.count},
                     {"train_loss", spread_json(row.train_loss)},
                     {"val_loss", spread_json(row.val_loss)},
                     {"val_accuracy", spread_json(row.val_accuracy)}});
  const lesson::TrainOptions& t = s.train;
  nlohmann::ordered_json settings = {{"epochs", t.epochs},
                                     {"lr", t.lr},
                                     {"batch_size", t.batch_size},
                                     {"drop_last", t.drop_last},
                                     {"depth", t.net.depth},
                                     {"width", t.net.width},
                                     {"groups", t.net.groups},
                                     {"arch", lesson::arch_name(t.model.arch)},
                                     {"blocks", t.model.blocks},
                                     {"expansion", t.model.expansion},
                                     {"dropout", t.model.dropout},
                                     {"init", lesson::init_name(t.model.init)},
                                     {"seeds", s.seeds},
                                     {"init_from", s.init_from_dir},
                                     {"batch_order", s.batch_order},
                                     {"trainer", trainer_json(t.trainer)}};
  return apps::summary_json(s, settings, stop_signal, {{"norms", norms}, {"runs", runs}});
}

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

}  // namespace minidl::digits
