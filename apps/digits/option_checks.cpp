// The checks of options.hpp that look at several options at once, norm by norm, and those
// that need the training split.
#include <limits>

#include "minidl/tensor/error.hpp"
#include "models/cnn.hpp"
#include "options.hpp"
#include "runs/run_stats.hpp"

namespace minidl::digits {

namespace {

using lesson::Arch;
using lesson::NormKind;

// A norm the arch has no form of, or GroupNorm's groups not dividing what it normalizes.
void check_norm(NormKind norm, const Settings& s) {
  const lesson::DeepNetOptions& net = s.train.net;
  if (s.train.model.arch == Arch::CNN) {
    if (norm == NormKind::RMS)
      throw UsageError(
          "the CNN has no RMSNorm form (RMSNorm normalizes trailing dims): choose from none, batch, layer, "
          "group, instance, dyt with --arch cnn");
    if (norm == NormKind::Group && lesson::kCnnChannels % net.groups != 0)
      throw UsageError(cat("GroupNorm in the CNN needs groups to divide its ", lesson::kCnnChannels, " and ",
                           2 * lesson::kCnnChannels, " channels: groups ", net.groups, " does not divide ",
                           lesson::kCnnChannels));
    return;
  }
  if (norm == NormKind::Instance)
    throw UsageError(
        "instance normalization needs images: use it with --arch cnn (in the MLP each of its groups "
        "would hold one value)");
  if (norm == NormKind::Group && net.width % net.groups != 0)
    throw UsageError(
        cat("GroupNorm needs groups to divide width: groups ", net.groups, " does not divide width ", net.width));
}

// Builds the model once to see that its sizes fit (a shape whose element count overflows).
void check_fits(NormKind norm, const Settings& s) {
  const lesson::DeepNetOptions& net = s.train.net;
  const lesson::ModelOptions& model = s.train.model;
  try {
    Generator gen(0);
    (void)lesson::build_model(norm, net, {.arch = model.arch, .blocks = model.blocks, .expansion = model.expansion},
                              gen);
  } catch (const Error& e) {
    if (model.arch == Arch::MLP)
      throw UsageError(cat("deep_net(", lesson::short_name(norm), ") with depth ", net.depth, " and width ", net.width,
                           " cannot be built: ", e.what()));
    throw UsageError(cat("--arch ", lesson::arch_name(model.arch), " with ", lesson::short_name(norm), ", width ",
                         net.width, " cannot be built: ", e.what()));
  }
}

}  // namespace

void check_settings(const Settings& s) {
  for (NormKind norm : s.norms) {
    check_norm(norm, s);
    check_fits(norm, s);
  }
}

int64_t check_against_data(const Settings& s, int64_t train_examples) {
  const lesson::TrainOptions& t = s.train;
  if (t.drop_last && t.batch_size > train_examples)
    throw UsageError(cat("batch size ", t.batch_size, " with --drop-last leaves no batch of the ", train_examples,
                         "-example training split to train on"));
  const int64_t per_epoch = lesson::steps_per_epoch(train_examples, t.batch_size, t.drop_last);
  const int64_t most = std::numeric_limits<int64_t>::max();
  const int64_t steps = t.epochs > most / per_epoch ? most : t.epochs * per_epoch;
  if (t.trainer.warmup > 0 && t.trainer.warmup >= steps)
    throw UsageError(cat("--warmup ", t.trainer.warmup, " is not shorter than the run's ", steps,
                         " steps: nothing would train at the full lr"));
  return steps;
}

}  // namespace minidl::digits
