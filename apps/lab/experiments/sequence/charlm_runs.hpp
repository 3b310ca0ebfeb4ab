#pragma once
// What the sequence chapter's experiments share: charlm's training runs (apps/charlm,
// docs/charlm.md) on the context's words, as records.
#include <cmath>
#include <cstdint>
#include <functional>

#include "tools.hpp"
#include "training/charlm_train.hpp"

namespace minidl::lab {

/// ln 27 nats, guessing among charlm's tokens: what a run that diverged or did not finish counts as.
const double kUniformLoss = std::log(double(charlm::kVocabSize));

/// charlm's defaults (makemore's model and AdamW) for `steps` optimizer steps, or
/// `quick_steps` with --quick; the validation loss only at the end.
charlm::RunOptions charlm_training(const Settings& settings, int64_t steps, int64_t quick_steps);

/// Trains one charlm run and returns its record: the given keys, then norm, position, seed,
/// status ("ok", "diverged" when its loss turned NaN or infinite, "failed" when it threw),
/// steps, train_loss, val_loss (NaN unless ok) and ms_per_step. `trained`, when given, sees a
/// finished run (its model among it) before the record is made.
Record charlm_record(const Context& context, const charlm::RunOptions& options, Record keys = {},
                     const std::function<void(charlm::RunResult&)>& trained = {});
/// A job for charlm_record, its cost proportional to the run's multiply-adds.
Job charlm_job(const Context& context, const charlm::RunOptions& options, Record keys = {});

/// The first `at_most` of the settings' seeds, each as seed + offset: a grid too large for
/// every seed, or fresh seeds for a rule written after runs on the plain ones.
std::vector<uint64_t> first_seeds(const Settings& s, size_t at_most, uint64_t offset = 0);

/// A job per norm and seed (norms outer), each as costly as charlm_job's, its records what
/// measure(options with that norm and seed) returns (a Record or several).
template <typename Measure>
std::vector<Job> charlm_jobs(const Context& context, charlm::RunOptions options,
                             const std::vector<charlm::NormKind>& norms, const Measure& measure) {
  std::vector<Job> jobs;
  for (charlm::NormKind norm : norms) {
    options.model.norm = norm;
    append(jobs,
           seed_jobs(context.settings.seeds, charlm_job(context, options).cost, [options, measure](uint64_t seed) {
             charlm::RunOptions run = options;
             run.seed = seed;
             return measure(run);
           }));
  }
  return jobs;
}

}  // namespace minidl::lab
