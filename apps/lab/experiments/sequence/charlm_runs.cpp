#include "charlm_runs.hpp"

#include <algorithm>
#include <limits>

namespace minidl::lab {

charlm::RunOptions charlm_training(const Settings& settings, int64_t steps, int64_t quick_steps) {
  charlm::RunOptions options;
  options.steps = settings.quick ? quick_steps : steps;
  options.eval_every = options.steps;
  return options;
}

std::vector<uint64_t> first_seeds(const Settings& s, size_t at_most, uint64_t offset) {
  std::vector<uint64_t> seeds;
  for (size_t k = 0; k < std::min(at_most, s.seeds.size()); ++k) seeds.push_back(s.seeds[k] + offset);
  return seeds;
}

Record charlm_record(const Context& context, const charlm::RunOptions& options, Record keys,
                     const std::function<void(charlm::RunResult&)>& trained) {
  Record record = std::move(keys);
  record.set("norm", charlm::short_name(options.model.norm));
  record.set("position", charlm::short_name(options.model.position));
  record.set("seed", double(options.seed));
  charlm::RunResult result;
  std::string status = "failed";
  try {
    result = charlm::train_run(context.words, options);
    status = result.ok() ? "ok" : "diverged";
    if (result.ok() && trained) trained(result);
  } catch (const std::exception&) {
    result = charlm::RunResult{};
  }
  const bool ok = status == "ok";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double steps = double(result.curve.size());
  record.set("status", status);
  record.set("steps", steps);
  record.set("train_loss", ok ? double(result.train_loss) : nan);
  record.set("val_loss", ok ? double(result.val_loss) : nan);
  record.set("ms_per_step", ok && steps > 0 ? 1e3 * result.seconds / steps : nan);
  return record;
}

Job charlm_job(const Context& context, const charlm::RunOptions& options, Record keys) {
  // In the units of the digits' train_job: a lesson run costs about 6.5e4 and takes 40 ms,
  // charlm's default 1000 steps about 18 s.
  const charlm::ModelOptions& m = options.model;
  const double width = double(m.width) / 64.0;
  const double cost = 230.0 * double(options.steps * options.batch_size * m.layers) * width * width;
  return {cost, [&context, options, keys]() { return std::vector<Record>{charlm_record(context, options, keys)}; }};
}

}  // namespace minidl::lab
