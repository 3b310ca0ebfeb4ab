#include "summary.hpp"

#include <csignal>
#include <nlohmann/json.hpp>

#include "lesson/seeds.hpp"

namespace minidl::digits {

namespace {

nlohmann::ordered_json spread_json(const lesson::Spread& s) {
  if (s.count == 0) return nullptr;
  return {{"mean", s.mean}, {"sd", s.sd}, {"min", s.min}, {"max", s.max}};
}

nlohmann::ordered_json signal_json(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return nullptr;
}

}  // namespace

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
                                     {"batch_order", s.batch_order}};
  const nlohmann::ordered_json summary{
      {"settings", settings}, {"interrupted", signal_json(stop_signal)}, {"norms", norms}, {"runs", runs}};
  return summary.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace minidl::digits
