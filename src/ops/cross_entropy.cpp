#include "minidl/ops/cross_entropy.hpp"

#include <cmath>
#include <memory>
#include <vector>

#include "kernels/broadcast.hpp"
#include "kernels/exp_value.hpp"
#include "kernels/parallel_for.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/reduce.hpp"
#include "minidl/ops/shape_ops.hpp"
#include "minidl/ops/softmax.hpp"
#include "minidl/ops/unary.hpp"
#include "minidl/tensor/error.hpp"
#include "tensor/small_blocks.hpp"

namespace minidl {

std::string reduction_name(Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return "none";
    case Reduction::Mean:
      return "mean";
    case Reduction::Sum:
      return "sum";
  }
  return "unknown";
}

namespace {

constexpr int64_t kIgnored = -1;  // class index stored for a row whose target is ignore_index

// The op's small buffers come from the free lists (src/tensor/small_blocks.hpp), not malloc.
template <typename T>
using PooledVector = std::vector<T, detail::SmallBlockAllocator<T>>;
using detail::make_pooled;

// The problem's sizes and what the backward needs besides the logits.
struct Problem {
  int64_t n = 0, c = 0;
  PooledVector<int64_t> classes;  // (N) target class, or kIgnored
  PooledVector<float> weights;    // (C) class weights, ones when none were given
  double weight_total = 0.0;      // sum over classes of weights[c] (the smoothing term's scale)
  double smoothing = 0.0;
};

// The checks of weight and label_smoothing, for logits of c classes.
void check_options(const Tensor& logits, int64_t c, const CrossEntropyOptions& options) {
  if (options.weight.defined() && options.weight.shape() != Shape{c})
    throw Error(cat("cross_entropy: expected weight of shape [", c, "] (one per class) for logits of shape ",
                    to_string(logits.shape()), ", got ", to_string(options.weight.shape())));
  if (!(options.label_smoothing >= 0.0 && options.label_smoothing <= 1.0))
    throw Error(cat("cross_entropy: label_smoothing must be between 0.0 and 1.0, got ", options.label_smoothing));
}

std::string describe_target(float v) { return std::isfinite(v) && std::abs(v) < 1e15f ? cat(int64_t(v)) : cat(v); }

// Checks the shapes and options; fills n, c, weights.
Problem check_inputs(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options) {
  if (logits.dim() != 1 && logits.dim() != 2)
    throw Error(cat("cross_entropy: expected logits of shape [N, C, *] or [C], got ", to_string(logits.shape())));
  const bool batched = logits.dim() == 2;
  Problem p;
  p.n = batched ? logits.size(0) : 1;
  p.c = logits.size(-1);
  const Shape expected_targets = batched ? Shape{p.n} : Shape{};
  if (targets.shape() != expected_targets)
    throw Error(cat("cross_entropy: expected targets of shape ", to_string(expected_targets),
                    " (class indices) for logits of shape ", to_string(logits.shape()), ", got ",
                    to_string(targets.shape())));
  check_options(logits, p.c, options);
  p.smoothing = options.label_smoothing;
  p.weights.assign(size_t(p.c), 1.0f);
  if (options.weight.defined()) p.weights.assign(options.weight.data(), options.weight.data() + p.c);
  for (float w : p.weights) p.weight_total += w;
  return p;
}

// Each target as a class index, or kIgnored; throws on the first bad one.
void read_classes(const Tensor& targets, int64_t ignore_index, Problem& p) {
  p.classes.resize(size_t(p.n));
  const float* t = targets.data();
  for (int64_t i = 0; i < p.n; ++i) {
    const float v = t[i];
    if (!std::isfinite(v) || v != std::floor(v))
      throw Error(cat("cross_entropy: target ", v, " at position ", i,
                      " is not a class index (expected an integer in [0, ", p.c, ") or ignore_index ", ignore_index,
                      ")"));
    if (double(v) == double(ignore_index)) {
      p.classes[size_t(i)] = kIgnored;
      continue;
    }
    if (v < 0.0f || double(v) >= double(p.c))
      throw Error(cat("cross_entropy: target ", describe_target(v), " at position ", i, " is out of range for ", p.c,
                      " classes (expected 0..", p.c - 1, " or ignore_index ", ignore_index, ")"));
    p.classes[size_t(i)] = int64_t(v);
  }
}

// Forward kernel: loss (N), the per-example loss in the header's formula (0 for ignored
// rows), from each row's stable log-softmax, log p_ij = (x_ij - top_i) - log_sum_i (kept
// apart so a huge top never swallows log_sum); probs (N, C), when given, gets the softmax
// for the backward, which then needs no exp of its own.
void cross_entropy_forward(const float* x, const Problem& p, double* loss, double* probs) {
  const int64_t c = p.c;
  const double s = p.smoothing;
  kernels::parallel_for(p.n, kernels::grain_for(c), [&](int64_t i) {
    const float* row = x + i * c;  // (C)
    float top = -INFINITY;
    for (int64_t j = 0; j < c; ++j) top = std::max(top, row[j]);
    // The exponentials first, a loop that vectorizes, then their sum in order.
    thread_local std::vector<double> scratch;
    if (!probs && scratch.size() < size_t(c)) scratch.resize(size_t(c));
    double* e = probs ? probs + i * c : scratch.data();  // (C)
    for (int64_t j = 0; j < c; ++j) e[j] = kernels::exp_nonpositive(double(row[j] - top));
    double total = 0.0;
    for (int64_t j = 0; j < c; ++j) total += e[j];
    if (probs)  // e is the row of probs: the exponentials become the softmax in place
      for (int64_t j = 0; j < c; ++j) e[j] /= total;
    const double log_sum = std::log(total);
    const int64_t t = p.classes[size_t(i)];
    if (t == kIgnored) {
      loss[i] = 0.0;
      return;
    }
    double value = (1.0 - s) * p.weights[size_t(t)] * (log_sum - double(row[t] - top));
    if (s > 0.0) {  // sum_c w_c (-log p_ic) = log_sum sum_c w_c - sum_c w_c (x_ic - top)
      double weighted = 0.0;
      for (int64_t j = 0; j < c; ++j) weighted += double(p.weights[size_t(j)]) * double(row[j] - top);
      value += s / double(c) * (log_sum * p.weight_total - weighted);
    }
    loss[i] = value;
  });
}

// Backward kernel: dx (N, C) from the gradient of each example's loss, scale (N).
//   dloss_i/dx_ij = (1 - s) w_t (p_ij - [j == t]) + (s / C) (p_ij sum_c w_c - w_j)
void cross_entropy_backward(const double* probs, const Problem& p, const double* scale, float* dx) {
  const int64_t c = p.c;
  const double s = p.smoothing;
  kernels::parallel_for(p.n, kernels::grain_for(c), [&](int64_t i) {
    const double* row = probs + i * c;  // (C)
    float* drow = dx + i * c;           // (C)
    const int64_t t = p.classes[size_t(i)];
    if (t == kIgnored) {
      std::fill_n(drow, c, 0.0f);
      return;
    }
    const double hard = (1.0 - s) * p.weights[size_t(t)];
    const double soft = s / double(c);
    for (int64_t j = 0; j < c; ++j) {
      const double prob = row[j];
      drow[j] = float(scale[i] * (hard * prob + soft * (prob * p.weight_total - p.weights[size_t(j)])));
    }
    drow[t] -= float(scale[i] * hard);
  });
}

// Class-probability targets, the shape of the logits (C), (N, C) or (N, C, d1, ...): from
// primitives, loss = -sum_c w_c t_c log_softmax(x)_c with t = (1 - s) t + s / C; the mean
// divides by the number of examples (N d1 ...), never by the weights, as PyTorch.
Tensor cross_entropy_probabilities(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options) {
  const int64_t class_dim = logits.dim() == 1 ? 0 : 1, c = logits.size(class_dim);
  check_options(logits, c, options);
  const double s = options.label_smoothing;
  Tensor t = s > 0.0 ? targets * float(1.0 - s) + float(s / double(c)) : targets;
  Tensor terms = log_softmax(logits, class_dim) * t;  // (N, C, *)
  if (options.weight.defined()) {
    Shape along(size_t(logits.dim()), 1);  // the weights along the class dim
    along[size_t(class_dim)] = c;
    terms = terms * options.weight.reshape(along);
  }
  Tensor loss = -sum(terms, {class_dim});  // (N, *)
  switch (options.reduction) {
    case Reduction::None:
      return loss;
    case Reduction::Sum:
      return sum(loss);
    case Reduction::Mean:
      return mean(loss);
  }
  return loss;
}

// Logits (N, C, d1, ...) with targets (N, d1, ...): the classes moved last, (N d1 ..., C),
// through the fused loss, and a per-example loss shaped like the targets again.
Tensor cross_entropy_spatial(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options) {
  const int64_t n = logits.size(0), c = logits.size(1), positions = n * c == 0 ? 0 : logits.numel() / (n * c);
  Shape expected{n};
  expected.insert(expected.end(), logits.shape().begin() + 2, logits.shape().end());
  if (targets.shape() != expected)
    throw Error(cat("cross_entropy: expected targets of shape ", to_string(expected),
                    " (class indices) or of the logits' shape (class probabilities) for logits of shape ",
                    to_string(logits.shape()), ", got ", to_string(targets.shape())));
  Tensor rows = transpose(logits.reshape({n, c, positions}), 1, 2).reshape({n * positions, c});
  Tensor loss = cross_entropy(rows, targets.reshape({n * positions}), options);
  return options.reduction == Reduction::None ? loss.reshape(expected) : loss;
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options) {
  if (logits.dim() >= 1 && targets.shape() == logits.shape())
    return cross_entropy_probabilities(logits, targets, options);
  if (logits.dim() > 2) return cross_entropy_spatial(logits, targets, options);
  auto problem = make_pooled<Problem>(check_inputs(logits, targets, options));
  Problem& p = *problem;
  read_classes(targets, options.ignore_index, p);

  const bool want_grad = needs_grad({logits});
  PooledVector<double> loss(size_t(p.n));                                             // (N)
  auto probs = make_pooled<PooledVector<double>>(want_grad ? size_t(p.n * p.c) : 0);  // (N, C)
  cross_entropy_forward(logits.data(), p, loss.data(), want_grad ? probs->data() : nullptr);

  // The mean's divisor: the weights of the targets that count (PyTorch's total_weight).
  double divisor = 0.0;
  for (int64_t i = 0; i < p.n; ++i)
    if (p.classes[size_t(i)] != kIgnored) divisor += p.weights[size_t(p.classes[size_t(i)])];

  const Reduction reduction = options.reduction;
  Tensor out;
  if (reduction == Reduction::None) {
    out = Tensor::empty(targets.shape());  // (N), or rank 0 for one unbatched example
    for (int64_t i = 0; i < p.n; ++i) out.data()[i] = float(loss[size_t(i)]);
  } else {
    double total = 0.0;  // summed in a fixed order: the same bits whatever the thread count
    for (double v : loss) total += v;
    // Total weight 0: PyTorch's mean is NaN (its nll term is 0 / 0), whatever the smoothing adds.
    const double mean = divisor == 0.0 ? NAN : total / divisor;
    out = Tensor::scalar(float(reduction == Reduction::Mean ? mean : total));
  }

  // PyTorch's cross_entropy is log_softmax and nll_loss: its result's grad_fn is NllLossBackward0.
  return record(out, "NllLoss", {logits},
                [shape = logits.shape(), problem, probs, reduction, divisor](const Tensor& g) -> std::vector<Tensor> {
                  const Problem& p = *problem;
                  PooledVector<double> scale(size_t(p.n));  // (N) dL/dloss_i
                  for (int64_t i = 0; i < p.n; ++i) {
                    const double gi = reduction == Reduction::None ? g.data()[i] : g.data()[0];
                    // Total weight 0: NaN for every counted row, as PyTorch's -w_t / total_weight.
                    const double mean_scale = divisor == 0.0 ? NAN : gi / divisor;
                    scale[size_t(i)] = reduction == Reduction::Mean ? mean_scale : gi;
                  }
                  Tensor dx = Tensor::empty(shape);
                  cross_entropy_backward(probs->data(), p, scale.data(), dx.data());
                  return {dx};
                });
}

}  // namespace minidl
