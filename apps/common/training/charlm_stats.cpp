#include "training/charlm_stats.hpp"

#include "runs/run_stats.hpp"
#include "training/charlm_train.hpp"

namespace minidl::charlm {

namespace {

// Every module below `module` that a forward calls, under its dotted name, depth first in
// registration order; the name-only groups (PyTorch's ModuleDict and ModuleList,
// "transformer", "transformer.h") have no forward and are left out.
void collect_called(nn::Module& module, const std::string& prefix,
                    std::vector<std::pair<std::string, nn::Module*>>& out) {
  for (const auto& [name, child] : module.named_children()) {
    const std::string path = prefix.empty() ? name : prefix + "." + name;
    const std::string type = child->type_name();
    if (type != "ModuleDict" && type != "ModuleList") out.emplace_back(path, child.get());
    collect_called(*child, path, out);
  }
}

}  // namespace

std::unique_ptr<diagnostics::StatsRecorder> model_recorder(CharTransformer& model) {
  auto recorder = std::make_unique<diagnostics::StatsRecorder>();
  std::vector<std::pair<std::string, nn::Module*>> modules;
  collect_called(model, "", modules);
  for (const auto& [name, module] : modules) recorder->watch_output(name, *module);
  recorder->watch_parameters(model);
  return recorder;
}

std::string stats_csv(const std::vector<RunResult>& results) {
  std::string csv = "run,seed,step,layer,quantity,statistic,value\n";
  for (const RunResult& r : results) csv += lesson::stats_rows(run_name(r.norm, r.position), r.seed, r.stats);
  return csv;
}

}  // namespace minidl::charlm
