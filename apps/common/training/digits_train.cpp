#include "training/digits_train.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "minidl/autograd/grad_mode.hpp"
#include "minidl/data/data_loader.hpp"
#include "minidl/nn/utils/clip_grad.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/cross_entropy.hpp"
#include "minidl/ops/reduce.hpp"
#include "minidl/tensor/error.hpp"
#include "runs/run_stats.hpp"

namespace minidl::lesson {

namespace {

using Clock = std::chrono::steady_clock;

// Seeds the run's dropout stream: seed ^ salt, so it differs from the init stream Generator(seed).
constexpr uint64_t kDropoutStreamSalt = 0x9E3779B97F4A7C15ULL;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// "nan", "inf", "-inf" (printf and iostreams may write "-nan").
std::string non_finite_text(float value) {
  if (std::isnan(value)) return "nan";
  return value > 0 ? "inf" : "-inf";
}

std::string divergence_message(const TrainOptions& o, int64_t epoch, int64_t step, float loss) {
  return cat(run_label(o.norm, o.seed, o.model.arch), ": the loss became ", non_finite_text(loss), " at epoch ", epoch,
             ", step ", step, "; training stopped. Try a lower learning rate than ", o.lr, ".");
}

// Why a trained model is unusable: weights or buffers that hold NaN or infinity, or a final
// evaluation that is not finite; nothing when all is finite.
std::optional<std::string> non_finite_end(const nn::Module& model, const RunResult& r) {
  int64_t tensors = 0;
  std::string first;
  for (const auto& entry : model.state_dict()) {
    const float* v = entry.value.data();
    const bool finite = std::all_of(v, v + entry.value.numel(), [](float x) { return std::isfinite(x); });
    if (!finite && tensors++ == 0) first = entry.name;
  }
  if (tensors > 0)
    return cat("training ended with ", tensors, " tensor", tensors > 1 ? "s" : "",
               " holding NaN or infinity (the first: ", first, ")");
  if (!std::isfinite(r.train_loss) || !std::isfinite(r.val_loss))
    return cat("the final evaluation gave a training loss of ", r.train_loss, " and a validation loss of ", r.val_loss);
  return std::nullopt;
}

// Rows [shard.begin, shard.end) of a batch tensor (N, ...), copied.
Tensor rows(const Tensor& t, const apps::Shard& shard) {
  Shape shape = t.shape();
  const int64_t row = t.size(0) == 0 ? 0 : t.numel() / t.size(0);
  shape[0] = shard.end - shard.begin;
  Tensor out = Tensor::empty(shape);
  std::copy(t.data() + shard.begin * row, t.data() + shard.end * row, out.data());
  return out;
}

// One optimizer step's forward and backward on this process's part of the batch; returns
// the loss over the whole (global) batch. With N ranks each rank's mean loss is weighted by
// its share of the batch (n_r * N / n), so the averaged gradients are those of the global
// batch's mean loss, short last batch included.
float forward_backward(nn::Module& model, const data::Batch& batch, apps::DataParallel* parallel) {
  if (!parallel) {
    Tensor loss = cross_entropy(model(batch.inputs), batch.targets);
    const float value = loss.item();
    if (std::isfinite(value)) loss.backward();
    return value;
  }
  const int64_t n = batch.inputs.size(0);
  const apps::Shard shard = apps::shard_of(n, parallel->rank(), parallel->world_size());
  const double share = double(shard.end - shard.begin) / double(n);
  const Tensor inputs = rows(batch.inputs, shard);
  Tensor loss =
      cross_entropy(parallel->forward([&](nn::Module& m) { return m.forward(inputs); }), rows(batch.targets, shard));
  const float value = float(parallel->total(double(loss.item()) * share));  // the same on every rank
  if (!std::isfinite(value)) return value;
  const float weight = float(share * parallel->world_size());
  if (weight != 1.0f) loss = loss * weight;
  loss.backward();
  parallel->reduce_gradients();
  return value;
}

// Whether any process was asked to stop: all of them stop at the same step.
bool stop_asked(const TrainOptions& o) {
  const bool here = o.stop && o.stop->load(std::memory_order_relaxed);
  return o.parallel ? o.parallel->total(here ? 1.0 : 0.0) > 0.0 : here;
}

}  // namespace

std::string run_label(NormKind norm, uint64_t seed, Arch arch) {
  return cat("run \"", short_name(norm), "\" (", display_name(norm, arch), ", seed ", seed, ")");
}

std::optional<std::string> refusal(const TrainOptions& o, int64_t train_examples) {
  // The CNN's BatchNorm2d has H x W values per channel and example: a batch of one is enough.
  if (o.norm != NormKind::Batch || o.batch_size < 1 || o.model.arch == Arch::CNN) return std::nullopt;
  const std::string why = "BatchNorm1d in training mode needs more than one value per channel";
  if (o.batch_size == 1)
    return cat(run_label(o.norm, o.seed, o.model.arch), " refused: batch size 1 puts one example in every batch, and ",
               why, "; choose a batch size of at least 2 (with --drop-last where the last batch would hold one)");
  if (!o.drop_last && train_examples % o.batch_size == 1)
    return cat(run_label(o.norm, o.seed, o.model.arch), " refused: batch size ", o.batch_size, " on the ",
               train_examples, "-example training split leaves a last batch of one example, and ", why,
               "; pass --drop-last or choose another batch size");
  return std::nullopt;
}

Evaluation evaluate(nn::Module& model, const Tensor& inputs, const Tensor& targets) {
  NoGradGuard no_grad;
  Tensor logits = model(inputs);  // (N, classes)
  const float loss = cross_entropy(logits, targets).item();
  Tensor predicted = argmax(logits, 1);  // (N)
  int64_t correct = 0;
  for (int64_t i = 0; i < predicted.numel(); ++i) correct += predicted.data()[i] == targets.data()[i];
  return {loss, float(double(correct) / double(targets.numel()))};
}

std::string exact_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

std::string figure_text(double value, int decimals) {
  if (!std::isfinite(value)) return non_finite_text(float(value));
  constexpr double kLargestFixed = 1e6;  // past it, fixed form is a row of digits
  char text[64];
  std::snprintf(text, sizeof text, std::fabs(value) < kLargestFixed ? "%.*f" : "%.*e", decimals, value);
  return text;
}

std::string summary_line(const RunResult& result) {
  const std::string name = display_name(result.norm, result.arch);
  char line[160];
  if (result.ok()) {
    std::snprintf(line, sizeof line, "%-17s training loss %s   val accuracy %s", name.c_str(),
                  figure_text(result.train_loss).c_str(), figure_text(result.val_accuracy).c_str());
  } else if (!result.curve.empty() && !std::isfinite(result.curve.back().loss)) {  // at a step
    const StepLoss& last = result.curve.back();
    std::snprintf(line, sizeof line, "%-17s diverged: loss %s at epoch %lld, step %lld", name.c_str(),
                  non_finite_text(last.loss).c_str(), static_cast<long long>(last.epoch),
                  static_cast<long long>(last.step));
  } else {
    std::snprintf(line, sizeof line, "%-17s %s", name.c_str(),
                  result.interrupted ? "interrupted"
                  : result.diverged  ? "diverged after its last step"
                                     : "failed");
  }
  return line;
}

RunResult train_run(const data::DigitsSplit& data, const TrainOptions& o, const EpochCallback& on_epoch) {
  const auto start = Clock::now();
  RunResult result{.norm = o.norm, .arch = o.model.arch, .seed = o.seed};
  Generator init(o.seed);  // the run's own: runs on several threads draw the same numbers
  // Dropout's masks come from a stream of the run's own too, apart from the init's.
  auto dropout_stream = std::make_shared<Generator>(o.seed ^ kDropoutStreamSalt);
  result.model = build_model(o.norm, o.net, o.model, init, dropout_stream);
  if (o.init) result.model->load_state_dict(*o.init, /*strict=*/true);
  if (o.parallel) result.model = std::dynamic_pointer_cast<nn::Sequential>(o.parallel->prepare(result.model));
  nn::Sequential& model = *result.model;
  const std::unique_ptr<optim::Optimizer> optimizer = make_optimizer(o.trainer, o.lr, model.parameters());
  data::DataLoader loader(data::TensorDataset(data.X_train, data.y_train),
                          {.batch_size = o.batch_size, .shuffle = true, .drop_last = o.drop_last, .seed = o.seed});
  const std::shared_ptr<optim::LRScheduler> schedule =
      make_schedule(o.trainer, *optimizer, o.steps ? *o.steps : o.epochs * loader.size(), loader.size());

  std::unique_ptr<diagnostics::StatsRecorder> stats;
  if (o.stats_every > 0) stats = lesson_recorder(model);
  const int64_t epoch_steps = steps_per_epoch(data.X_train.size(0), o.batch_size, o.drop_last);
  int64_t step = 0;
  auto more_epochs = [&](int64_t epoch) { return o.steps ? step < *o.steps : epoch <= o.epochs; };
  for (int64_t epoch = 1; more_epochs(epoch) && result.ok(); ++epoch) {
    const auto epoch_start = Clock::now();
    model.train();
    double loss_sum = 0.0;
    int64_t batch_count = 0;
    data::DataLoader::Epoch batches =
        o.batch_order.empty() ? loader.epoch() : loader.epoch(o.batch_order[size_t(epoch - 1)]);
    for (const data::Batch& batch : batches) {
      if (o.steps && step == *o.steps) break;
      if (stop_asked(o)) {
        result.interrupted = true;
        result.failure =
            cat(run_label(o.norm, o.seed, o.model.arch), ": interrupted before epoch ", epoch, ", step ", step + 1);
        break;
      }
      optimizer->zero_grad();
      if (stats && records_step(step + 1, o.stats_every, epoch_steps)) stats->arm(step + 1);
      const float value = forward_backward(model, batch, o.parallel.get());
      result.curve.push_back({epoch, ++step, value});
      if (!std::isfinite(value)) {
        result.failure = divergence_message(o, epoch, step, value);
        result.diverged = true;
        break;
      }
      if (o.trainer.clip) nn::utils::clip_grad_norm_(model.parameters(), *o.trainer.clip);
      if (stats) stats->before_update();
      optimizer->step();
      if (stats) stats->after_update();
      if (schedule) schedule->step();
      loss_sum += value;
      ++batch_count;
    }
    if (!result.ok()) continue;
    const double epoch_seconds = seconds_since(epoch_start);
    model.eval();
    const Evaluation val = evaluate(model, data.X_val, data.y_val);
    result.validation.push_back({epoch, step, val.loss, val.accuracy});
    if (on_epoch)
      on_epoch({o.norm, o.seed, epoch, o.epochs, loss_sum / double(batch_count), val.accuracy, epoch_seconds});
  }

  if (result.ok()) {
    model.eval();
    result.train_loss = evaluate(model, data.X_train, data.y_train).loss;
    const Evaluation val = evaluate(model, data.X_val, data.y_val);
    result.val_loss = val.loss;
    result.val_accuracy = val.accuracy;
    // Every step's loss can be finite while the last step blew the weights up: check the end.
    if (const std::optional<std::string> why = non_finite_end(model, result)) {
      result.failure =
          cat(run_label(o.norm, o.seed, o.model.arch), ": ", *why, "; try a lower learning rate than ", o.lr, ".");
      result.diverged = true;
    }
  }
  if (stats) {
    stats->disarm();  // a step that diverged recorded its forward only
    result.stats = stats->take_log();
  }
  if (!result.ok()) result.train_loss = result.val_loss = result.val_accuracy = std::numeric_limits<float>::quiet_NaN();
  result.seconds = seconds_since(start);
  return result;
}

std::string curves_csv(const std::vector<RunResult>& results) {
  std::string csv = "run,seed,epoch,step,loss\n";
  for (const RunResult& r : results)
    for (const StepLoss& s : r.curve)
      csv += cat(short_name(r.norm), ",", r.seed, ",", s.epoch, ",", s.step, ",", exact_text(s.loss), "\n");
  return csv;
}

std::string validation_csv(const std::vector<RunResult>& results) {
  std::string csv = "run,seed,epoch,step,val_loss,val_accuracy\n";
  for (const RunResult& r : results)
    for (const EpochValidation& v : r.validation)
      csv += cat(short_name(r.norm), ",", r.seed, ",", v.epoch, ",", v.step, ",", exact_text(v.loss), ",",
                 exact_text(v.accuracy), "\n");
  return csv;
}

}  // namespace minidl::lesson
