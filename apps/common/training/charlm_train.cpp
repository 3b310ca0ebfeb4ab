#include "training/charlm_train.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "training/charlm_stats.hpp"
#include "training/lr_trace.hpp"

namespace minidl::charlm {

namespace {

// Words per validation batch, as scripts/charlm_model.py's val_loss (batch_size=32): a
// batch's activations are live at once, so a larger one raises the program's peak memory.
constexpr int64_t kEvalBatch = 32;

// Batches of training-split positions: each epoch a permutation (Fisher-Yates, as the
// library's DataLoader shuffles, from a generator of the run's seed kept apart from the
// init's, or the --batch-order line), cut into whole batches, the short last one dropped.
class BatchSampler {
 public:
  BatchSampler(const RunOptions& o, int64_t train_words)
      : options_(o), words_(train_words), generator_(o.seed ^ 0x5eedba7c4ULL) {}
  std::vector<int64_t> next() {
    if (cursor_ + options_.batch_size > int64_t(order_.size())) new_epoch();
    std::vector<int64_t> picks(order_.begin() + cursor_, order_.begin() + cursor_ + options_.batch_size);
    cursor_ += options_.batch_size;
    return picks;
  }

 private:
  void new_epoch() {
    cursor_ = 0;
    if (!options_.batch_order.empty()) {
      order_ = options_.batch_order[size_t(epoch_++)];
      return;
    }
    order_.resize(size_t(words_));
    std::iota(order_.begin(), order_.end(), int64_t(0));
    for (int64_t i = words_ - 1; i > 0; --i) std::swap(order_[size_t(i)], order_[generator_.below(uint64_t(i) + 1)]);
    ++epoch_;
  }
  const RunOptions& options_;
  int64_t words_;
  Generator generator_;
  std::vector<int64_t> order_;
  int64_t cursor_ = 0, epoch_ = 0;
};

// logits (B, T, V) against the batch's targets, the padding ignored.
Tensor token_loss(const Tensor& logits, const Batch& batch, Reduction reduction) {
  return cross_entropy(logits.reshape({-1, kVocabSize}), batch.y, {.ignore_index = -1, .reduction = reduction});
}

Tensor batch_loss(CharTransformer& model, const Batch& batch, Reduction reduction) {
  return token_loss(model.forward(batch.x, batch.mask), batch, reduction);
}

// This rank's words of a global batch, padded to their own longest word; with `batch`, whose
// statistics cover the padding, to the global batch's longest, as one process pads them.
Batch shard_batch(const std::vector<std::string>& words, const std::vector<int64_t>& picks, const RunOptions& o) {
  const apps::Shard shard = apps::shard_of(int64_t(picks.size()), o.parallel->rank(), o.parallel->world_size());
  size_t longest = 0;
  for (int64_t pick : picks) longest = std::max(longest, words[size_t(pick)].size());
  const int64_t length = o.model.norm == NormKind::Batch ? int64_t(longest) + 1 : 0;
  return make_batch(words, {picks.begin() + shard.begin, picks.begin() + shard.end}, length);
}

// One step's forward and backward on this process's words of the batch; returns the mean
// loss over the real tokens of the whole (global) batch. With N ranks holding M_r of its M
// tokens, rank r's mean is scaled by M_r N / M before backward: the averaged gradient is
// then the global batch's token mean's, as one process computes it, however the tokens fall.
float forward_backward(CharTransformer& model, const std::vector<std::string>& words, const std::vector<int64_t>& picks,
                       const RunOptions& o) {
  apps::DataParallel* parallel = o.parallel.get();
  if (!parallel) {
    const Tensor loss = batch_loss(model, make_batch(words, picks), Reduction::Mean);
    loss.backward();
    return loss.item();
  }
  const Batch batch = shard_batch(words, picks, o);
  Tensor loss = token_loss(parallel->forward([&](nn::Module&) { return model.forward(batch.x, batch.mask); }), batch,
                           Reduction::Mean);
  // This rank's loss sum and tokens, then the batch's: the same on every rank.
  double totals[2] = {double(loss.item()) * double(batch.tokens), double(batch.tokens)};
  parallel->sum(totals);
  const auto weight = float(double(batch.tokens) * parallel->world_size() / totals[1]);
  if (weight != 1.0f) loss = loss * weight;
  loss.backward();
  parallel->reduce_gradients();
  return float(totals[0] / totals[1]);
}

// Whether any process was asked to stop: all of them stop at the same step.
bool stop_asked(const RunOptions& o) {
  double stop = o.stop && o.stop->load() ? 1.0 : 0.0;
  if (o.parallel) o.parallel->sum({&stop, 1});
  return stop > 0.0;
}

float mean_of_last(const std::vector<float>& curve, int64_t count) {
  const auto n = std::min<int64_t>(count, int64_t(curve.size()));
  const double sum = std::accumulate(curve.end() - n, curve.end(), 0.0);
  return n > 0 ? float(sum / double(n)) : std::numeric_limits<float>::quiet_NaN();
}

std::string failed_at(const RunOptions& o, int64_t step, const std::string& what) {
  return cat("run \"", run_name(o.model.norm, o.model.position), "\" (seed ", o.seed, "): ", what, " at step ", step);
}

}  // namespace

std::string run_name(NormKind norm, Position position) { return short_name(norm) + "-" + short_name(position); }

apps::RunLog run_log(const RunOptions& o, const RunResult& r, int64_t train_words) {
  apps::RunLog log{.name = run_name(r.norm, r.position), .seed = r.seed};
  const std::vector<double> lrs =
      lesson::lr_trace(o.trainer, o.lr, o.steps, steps_per_epoch(train_words, o.batch_size), int64_t(r.curve.size()));
  for (size_t i = 0; i < r.curve.size(); ++i) log.steps.push_back({int64_t(i) + 1, r.curve[i], lrs[i]});
  for (const ValPoint& v : r.val_curve) log.evals.push_back({v.step, v.loss, std::nullopt});
  return log;
}

float evaluate(CharTransformer& model, const std::vector<std::string>& words, const std::vector<int64_t>& indices,
               apps::DataParallel* parallel) {
  NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  if (parallel) parallel->share_buffers();
  const size_t first = parallel ? size_t(parallel->rank()) * kEvalBatch : 0;
  const size_t stride = parallel ? size_t(parallel->world_size()) * kEvalBatch : kEvalBatch;
  double totals[2] = {0.0, 0.0};  // loss sum, tokens
  for (size_t start = first; start < indices.size(); start += stride) {
    const size_t end = std::min(indices.size(), start + kEvalBatch);
    const Batch batch = make_batch(words, {indices.begin() + int64_t(start), indices.begin() + int64_t(end)});
    totals[0] += batch_loss(model, batch, Reduction::Sum).item();
    totals[1] += double(batch.tokens);
  }
  if (parallel) parallel->sum(totals);
  model.train(was_training);
  return float(totals[0] / totals[1]);
}

RunResult train_run(const WordSplit& data, const RunOptions& o, const ProgressCallback& progress) {
  const auto started = std::chrono::steady_clock::now();
  const auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  RunResult result{.norm = o.model.norm, .position = o.model.position, .seed = o.seed};
  Generator init(o.seed);
  result.model = std::make_shared<CharTransformer>(o.model, init);
  if (o.init) result.model->load_state_dict(*o.init, /*strict=*/true);
  if (o.parallel) o.parallel->prepare(result.model);
  CharTransformer& model = *result.model;
  const auto per_epoch = steps_per_epoch(int64_t(data.train.size()), o.batch_size);
  auto optimizer = lesson::make_optimizer(o.trainer, o.lr, model.parameters());
  auto schedule = lesson::make_schedule(o.trainer, *optimizer, o.steps, per_epoch);
  BatchSampler sampler(o, int64_t(data.train.size()));
  const auto stats = o.stats_every > 0 ? model_recorder(model) : nullptr;
  for (int64_t step = 1; step <= o.steps; ++step) {
    if (stop_asked(o)) {
      result.interrupted = true;
      result.failure = failed_at(o, step, "interrupted");
      break;
    }
    std::vector<int64_t> picks = sampler.next();
    for (int64_t& pick : picks) pick = data.train[size_t(pick)];
    if (stats && records_step(step, o.stats_every, o.steps)) stats->arm(step);
    optimizer->zero_grad();
    const float loss = forward_backward(model, data.words, picks, o);
    if (stats) stats->before_update();
    optimizer->step();
    if (stats) stats->after_update();
    if (schedule) schedule->step();
    result.curve.push_back(loss);
    if (!std::isfinite(loss)) {
      result.failure = failed_at(o, step, cat("the loss became ", loss));
      break;
    }
    if (step % o.eval_every == 0 || step == o.steps) {
      result.val_curve.push_back({step, evaluate(model, data.words, data.val, o.parallel.get())});
      result.train_loss = mean_of_last(result.curve, step % o.eval_every == 0 ? o.eval_every : step % o.eval_every);
      result.val_loss = result.val_curve.back().loss;
      result.seconds = seconds();
      if (progress) progress(result, step, o.steps);
    }
  }
  if (o.steps == 0) {
    result.val_loss = evaluate(model, data.words, data.val, o.parallel.get());
    result.train_loss = std::numeric_limits<float>::quiet_NaN();
  }
  if (stats) result.stats = stats->take_log();
  result.seconds = seconds();
  if (!result.ok()) result.train_loss = result.val_loss = std::numeric_limits<float>::quiet_NaN();
  return result;
}

}  // namespace minidl::charlm
