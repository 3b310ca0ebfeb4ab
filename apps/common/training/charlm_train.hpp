#pragma once
// One charlm run: seed, build the model, train it with AdamW on batches of words, evaluate
// on the validation split now and then, as makemore's loop does:
//
//   torch.manual_seed(seed); model = Transformer(config); opt = AdamW(lr, betas, wd, eps)
//   for step: x, y = batch; loss = F.cross_entropy(logits.view(-1, V), y.view(-1),
//             ignore_index=-1); opt.zero_grad(); loss.backward(); opt.step()
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/words.hpp"
#include "minidl/diagnostics/stats_recorder.hpp"
#include "models/charlm_model.hpp"
#include "run_log.hpp"
#include "runs/data_parallel.hpp"
#include "training/trainer_setup.hpp"

namespace minidl::charlm {

struct RunOptions {
  ModelOptions model{};
  uint64_t seed = 0;     // seeds the init and the batch order
  int64_t steps = 1000;  // optimizer steps
  int64_t batch_size = 32;
  double lr = 5e-4;
  lesson::TrainerSetup trainer{
      .optimizer = lesson::OptimizerKind::AdamW, .weight_decay = 0.01, .betas = std::array<double, 2>{0.9, 0.99}};
  int64_t eval_every = 200;             // validation loss every N steps and at the end
  std::optional<nn::StateDict> init{};  // --init-from: these weights instead of the random init
  /// Empty: a fresh permutation of the training split every epoch. Otherwise one permutation
  /// per epoch (--batch-order); batches are its consecutive chunks, the short last dropped.
  std::vector<std::vector<int64_t>> batch_order{};
  const std::atomic<bool>* stop = nullptr;  // turns true: the run stops before its next step
  int64_t stats_every = 0;                  // > 0 (--stats): record the steps charlm_stats.hpp's records_step names
  /// --distributed: the ranks this run trains with (runs/data_parallel.hpp); null: this process alone.
  std::shared_ptr<apps::DataParallel> parallel{};
};

struct ValPoint {
  int64_t step;
  float loss;
};

struct RunResult {
  NormKind norm = NormKind::Layer;
  Position position = Position::Pre;
  uint64_t seed = 0;
  std::vector<float> curve{};         // every step's training loss
  std::vector<ValPoint> val_curve{};  // each evaluation
  float train_loss = 0.0f;            // mean of the last evaluation interval's step losses
  float val_loss = 0.0f;              // eval mode, the whole validation split, at the end
  double seconds = 0.0;
  std::optional<std::string> failure{};  // set when the run did not finish (figures NaN)
  bool interrupted = false;
  std::shared_ptr<CharTransformer> model{};
  diagnostics::StatsLog stats{};  // the recorded steps (stats_every > 0)
  bool ok() const { return !failure.has_value(); }
};

/// "layer-pre": a run's name in tables, files and curves.
std::string run_name(NormKind norm, Position position);
/// The run's curves under its run_name: every step's loss and lr, each evaluation.
apps::RunLog run_log(const RunOptions& options, const RunResult& result, int64_t train_words);

/// Optimizer steps per epoch: whole batches of the training split (the short last dropped).
inline int64_t steps_per_epoch(int64_t train_words, int64_t batch_size) { return train_words / batch_size; }
/// The epochs `steps` steps take.
inline int64_t epochs_for(int64_t steps, int64_t per_epoch) { return (steps + per_epoch - 1) / per_epoch; }

/// The mean cross-entropy over the real tokens of words[indices] in eval mode, in batches
/// (with parallel: the ranks take the batches in turn, with rank 0's buffers).
float evaluate(CharTransformer& model, const std::vector<std::string>& words, const std::vector<int64_t>& indices,
               apps::DataParallel* parallel = nullptr);

using ProgressCallback = std::function<void(const RunResult& run, int64_t step, int64_t steps)>;
/// Trains one run; a run whose loss turns NaN or infinite, or that is interrupted, comes back
/// with failure set. progress is called after each evaluation.
RunResult train_run(const WordSplit& data, const RunOptions& options, const ProgressCallback& progress = {});

}  // namespace minidl::charlm
