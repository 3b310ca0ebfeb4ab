#pragma once
// One run of the lesson's experiment: seed, build deep_net(norm), train with SGD on the
// digits' training split, then evaluate in eval mode, as the lesson's loop does:
//
//   torch.manual_seed(seed); model = deep_net(norm); opt = SGD(model.parameters(), lr)
//   for epoch: model.train(); for xb, yb in DataLoader(train, batch_size, shuffle=True): step
//   model.eval(); training loss over the whole training split, accuracy over validation
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/digits.hpp"
#include "minidl/diagnostics/stats_recorder.hpp"
#include "minidl/nn/module.hpp"
#include "models/arch.hpp"
#include "models/deep_net.hpp"
#include "runs/data_parallel.hpp"
#include "training/trainer_setup.hpp"

namespace minidl::lesson {

struct TrainOptions {
  NormKind norm = NormKind::None;
  DeepNetOptions net{};
  ModelOptions model{};  // --arch, --blocks, --dropout, --init
  int64_t epochs = 5;
  double lr = 0.05;        // SGD without momentum unless `trainer` says otherwise
  TrainerSetup trainer{};  // optimizer, schedule, clipping (training/trainer_setup.hpp)
  int64_t batch_size = 64;
  bool drop_last = false;  // false: the short last batch is kept, as the lesson does
  /// Set: train exactly this many optimizer steps, as many epochs as that takes (the last one
  /// cut short), instead of `epochs` epochs.
  std::optional<int64_t> steps{};
  uint64_t seed = 0;  // seeds the run's own init generator and the loader's shuffling
  /// Start from these weights instead of the random init (--init-from); strict names and shapes.
  std::optional<nn::StateDict> init{};
  /// Empty: shuffle every epoch. Otherwise one permutation of the training split per epoch
  /// (--batch-order); batches are its consecutive chunks.
  std::vector<std::vector<int64_t>> batch_order{};
  /// When set and it turns true, the run stops before its next step (Ctrl-C): its result
  /// says it was interrupted.
  const std::atomic<bool>* stop = nullptr;
  /// > 0: record the layers' statistics (runs/run_stats.hpp) every stats_every-th step and
  /// at the end of each epoch, into RunResult::stats (--stats). 0: no recorder at all.
  int64_t stats_every = 0;
  /// Data-parallel training over several processes (--distributed); null: this process
  /// alone. batch_size is then the global batch, split across the ranks (runs/data_parallel.hpp).
  std::shared_ptr<apps::DataParallel> parallel{};
};

/// The loss of one optimizer step (epochs and steps count from 1; step runs across epochs).
struct StepLoss {
  int64_t epoch;
  int64_t step;
  float loss;
};

/// The model in eval mode on the validation split after an epoch.
struct EpochValidation {
  int64_t epoch;
  int64_t step;  // the last optimizer step of the epoch
  float loss;
  float accuracy;
};

/// Reported at the end of each epoch, for progress lines.
struct EpochReport {
  NormKind norm;
  uint64_t seed;
  int64_t epoch;  // 1-based
  int64_t epochs;
  double mean_loss;    // mean of the epoch's batch losses
  float val_accuracy;  // in eval mode, after the epoch
  double seconds;      // of this epoch's training
};
using EpochCallback = std::function<void(const EpochReport&)>;

struct Evaluation {
  float loss;      // mean cross-entropy
  float accuracy;  // fraction of argmax(logits) == target
};

struct RunResult {
  NormKind norm = NormKind::None;
  Arch arch = Arch::MLP;
  uint64_t seed = 0;
  std::vector<StepLoss> curve{};              // every optimizer step, in order
  std::vector<EpochValidation> validation{};  // after every completed epoch
  /// Set when the run did not finish: its loss turned NaN or infinite (the message names run,
  /// seed, epoch and step and suggests a lower learning rate), it was refused before training
  /// (see refusal()), or it failed with an error. The figures below are then NaN.
  std::optional<std::string> failure{};
  bool interrupted = false;  // stopped by TrainOptions::stop; failure says where
  bool diverged = false;     // a loss, weight or final figure turned NaN or infinite
  float train_loss = 0.0f;   // eval mode, the whole training split
  float val_loss = 0.0f;     // eval mode, the validation split
  float val_accuracy = 0.0f;
  double seconds = 0.0;                     // build + train + evaluate
  std::shared_ptr<nn::Sequential> model{};  // the trained model
  diagnostics::StatsLog stats{};            // the recorded steps' statistics (stats_every > 0)

  bool ok() const { return !failure.has_value(); }
};

/// Loss and accuracy of model on (inputs, targets) without recording a graph; the caller
/// chooses train or eval mode.
Evaluation evaluate(nn::Module& model, const Tensor& inputs, const Tensor& targets);

/// "run \"batch\" (BatchNorm1d, seed 3)": how messages name a run.
std::string run_label(NormKind norm, uint64_t seed, Arch arch = Arch::MLP);

/// A figure as the CSVs write it: 9 significant digits ("%.9g"), exact for a float, so the
/// file reads back the same bits.
std::string exact_text(double value);

/// A figure as the results print it: fixed with `decimals` decimals below 1e6 in magnitude,
/// exponent form beyond (a loss of 3.1e31 reads "3.100e+31", not 32 digits that run into
/// the next column); "nan", "inf", "-inf" when not finite.
std::string figure_text(double value, int decimals = 3);

/// The lesson's line: "<name padded to 17> training loss X.XXX   val accuracy Y.YYY", or
/// for a run that did not finish "<name padded to 17> diverged: loss nan at epoch E, step S"
/// ("failed: ..." for one that stopped otherwise).
std::string summary_line(const RunResult& result);

/// Why these options cannot train, decided before anything trains, or nothing: BatchNorm
/// in training mode needs more than one value per channel, so a run whose batches include
/// one of a single example (batch size 1, or a last batch of one without drop_last) is
/// refused with a message naming the run, the batch size, the split size and the fix.
std::optional<std::string> refusal(const TrainOptions& options, int64_t train_examples);

/// Runs one experiment. The options are trusted: the digits program checks its command line
/// once (apps/digits/options.hpp), the lab writes valid ones; sizes and epochs at least 1,
/// a batch order of one permutation of the split per epoch, init weights that fit the model.
RunResult train_run(const data::DigitsSplit& data, const TrainOptions& options, const EpochCallback& on_epoch = {});

/// The curves of several runs as CSV: header "run,seed,epoch,step,loss", one row per step,
/// run being the norm's short name, losses with 9 significant digits (exact for float).
std::string curves_csv(const std::vector<RunResult>& results);

/// Each epoch's validation figures as CSV: header "run,seed,epoch,step,val_loss,val_accuracy".
std::string validation_csv(const std::vector<RunResult>& results);

}  // namespace minidl::lesson
