#include "registry.hpp"

#include <algorithm>

#include "experiments/experiments.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::lab {

const std::vector<Chapter>& chapters() {
  // One entry per experiment, in report order.
  static const std::vector<Chapter> list{
      {"The digits: an MLP, a CNN and residual stacks",
       {depth_experiment(), learning_rate_experiment(), init_scale_experiment(), batch_size_experiment(),
        eval_mode_experiment(), running_stats_experiment(), batch_mates_experiment(), bias_before_norm_experiment(),
        rms_offset_experiment(), group_norm_experiment(), careful_init_experiment(), cnn_batch_size_experiment(),
        pre_post_norm_experiment(), adam_norm_experiment(), nothing_to_sync_experiment()}},
      {"Sequences: why transformers use LayerNorm (charlm on the word list)",
       {warmup_map_experiment(), init_gradients_experiment(), padding_stats_experiment(), leak_experiment(),
        batch_one_experiment(), rms_vs_layer_experiment(), charlm_sync_experiment()}},
      {"The papers behind the lesson",
       {ioffe_fig1_experiment(), santurkar_smoothness_experiment(), dyt_deep_net_experiment(), dyt_charlm_experiment(),
        scaled_lr_batch_experiment(), micro_batch_experiment(), warmup_gap_experiment()}},
  };
  return list;
}

const std::vector<std::shared_ptr<const Experiment>>& all_experiments() {
  static const std::vector<std::shared_ptr<const Experiment>> experiments = [] {
    std::vector<std::shared_ptr<const Experiment>> list;
    for (const Chapter& chapter : chapters())
      list.insert(list.end(), chapter.experiments.begin(), chapter.experiments.end());
    return list;
  }();
  return experiments;
}

std::vector<std::shared_ptr<const Experiment>> select_experiments(const std::vector<std::string>& names) {
  const auto& known = all_experiments();
  if (names.size() == 1 && names.front() == "all") return known;
  std::string choices;
  for (const auto& e : known) choices += (choices.empty() ? "" : ", ") + e->name();
  std::vector<std::shared_ptr<const Experiment>> chosen;
  for (const std::string& name : names) {
    auto it = std::find_if(known.begin(), known.end(), [&](const auto& e) { return e->name() == name; });
    if (it == known.end())
      throw UsageError(cat("unknown experiment \"", name, "\": choose from ", choices, ", or all"));
    if (std::find(chosen.begin(), chosen.end(), *it) != chosen.end())
      throw UsageError(cat("experiment \"", name, "\" is named twice"));
    chosen.push_back(*it);
  }
  return chosen;
}

}  // namespace minidl::lab
