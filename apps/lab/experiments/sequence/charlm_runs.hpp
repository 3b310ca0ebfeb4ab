#pragma once
// What the sequence chapter's experiments share: charlm's training runs (apps/charlm,
// docs/charlm.md) on the context's words, as records.
#include <cstdint>
#include <functional>

#include "lab.hpp"
#include "training/charlm_train.hpp"

namespace minidl::lab {

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

}  // namespace minidl::lab
