#include "runs/run_stats.hpp"

#include <algorithm>
#include <map>

#include "minidl/nn/activation.hpp"
#include "minidl/nn/conv.hpp"
#include "minidl/nn/linear.hpp"
#include "minidl/tensor/error.hpp"
#include "training/digits_train.hpp"

namespace minidl::lesson {

namespace {

/// What the recorder watches of one layer, by its kind: an activation's output ("tanh", "relu",
/// "gelu", "silu"), or a Linear's or Conv2d's weight ("linear", "conv"); "" for neither.
std::string activation_kind(const nn::Module& layer) {
  if (dynamic_cast<const nn::Tanh*>(&layer)) return "tanh";
  if (dynamic_cast<const nn::ReLU*>(&layer)) return "relu";
  if (dynamic_cast<const nn::GELU*>(&layer)) return "gelu";
  if (dynamic_cast<const nn::SiLU*>(&layer)) return "silu";
  return "";
}

/// Every module below `module`, depth first in registration order (the order forward calls
/// them in every lesson architecture), itself first.
void collect_modules(nn::Module& module, std::vector<nn::Module*>& out) {
  out.push_back(&module);
  for (const auto& child : module.named_children()) collect_modules(*child.second, out);
}

}  // namespace

std::unique_ptr<diagnostics::StatsRecorder> lesson_recorder(nn::Module& model) {
  std::vector<nn::Module*> layers;
  collect_modules(model, layers);
  // Tanh's outputs are binned over its range [-1, 1]; other activations over each
  // snapshot's min..max (ReLU, GELU and SiLU have no upper bound).
  const bool only_tanh = std::all_of(layers.begin(), layers.end(), [](const nn::Module* layer) {
    const std::string kind = activation_kind(*layer);
    return kind.empty() || kind == "tanh";
  });
  auto recorder =
      std::make_unique<diagnostics::StatsRecorder>(diagnostics::StatsOptions{.output_range = only_tanh ? 1.0f : 0.0f});
  std::map<std::string, int> counts;
  for (nn::Module* layer : layers) {
    if (const std::string kind = activation_kind(*layer); !kind.empty())
      recorder->watch_output(cat(kind, ++counts[kind]), *layer);
    if (auto* linear = dynamic_cast<nn::Linear*>(layer))
      recorder->watch_parameter(cat("linear", ++counts["linear"], ".weight"), linear->weight);
    if (auto* conv = dynamic_cast<nn::Conv2d*>(layer))
      recorder->watch_parameter(cat("conv", ++counts["conv"], ".weight"), conv->weight);
  }
  return recorder;
}

std::string stats_rows(const std::string& run, uint64_t seed, const diagnostics::StatsLog& stats) {
  std::string csv;
  for (const diagnostics::StatsRow& row : stats.rows)
    csv += cat(run, ",", seed, ",", row.step, ",", row.layer, ",", row.quantity, ",", diagnostics::statistic_name(row),
               ",", exact_text(row.value), "\n");
  return csv;
}

std::string stats_csv(const std::vector<RunResult>& results) {
  std::string csv = "run,seed,step,layer,quantity,statistic,value\n";
  for (const RunResult& result : results) csv += stats_rows(short_name(result.norm), result.seed, result.stats);
  return csv;
}

}  // namespace minidl::lesson
