#pragma once
// The lesson's network written by hand, as llm.c writes a model: every buffer allocated
// once, no tensors, no graph, no autograd; each step calls the same kernels the framework's
// ops call (kernels::gemm, tanh, the norm kernels, the column sums) and does the rest
// (cross-entropy, the running statistics, SGD) with the framework's own arithmetic. Its time
// is what the framework would take if its bookkeeping cost nothing: the floor of any
// framework built on these kernels, between the lesson's time and its sgemm floor. It is
// written apart from the framework on purpose (the table's hand-written baseline), and is
// the one lesson benchmark that calls the library's private kernels (minidl_internal).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "kernels/column_sums.hpp"
#include "kernels/exp_value.hpp"
#include "kernels/gemm.hpp"
#include "kernels/norm/channel_norm.hpp"
#include "kernels/norm/row_norm.hpp"
#include "kernels/tanh.hpp"
#include "lesson.hpp"
#include "minidl/minidl.hpp"

namespace minidl::bench {

/// What the hand-written step spends its time on, kernel by kernel.
enum class Part { Products, BiasAdd, BiasSums, Tanh, TanhBackward, NormForward, NormBackward, Loss, Sgd, Count };
inline constexpr std::array<const char*, size_t(Part::Count)> kPartNames{
    "sgemm", "bias add", "bias sums", "tanh", "tanh backward", "norm forward", "norm backward", "loss", "SGD"};
using PartSeconds = std::array<double, size_t(Part::Count)>;

class HandNet {
 public:
  /// Takes the parameters of `model` (a lesson_net with no norm, BatchNorm1d or
  /// LayerNorm), trained in place, and buffers for batches of up to max_rows examples.
  HandNet(nn::Sequential& model, int64_t max_rows) {
    for (size_t i = 0; i < model.size(); ++i) {
      const std::shared_ptr<nn::Module> m = model[i];
      if (auto* linear = dynamic_cast<nn::Linear*>(m.get())) {
        layers_.push_back(make_layer(*linear, max_rows));
      } else if (auto* bn = dynamic_cast<nn::BatchNorm1d*>(m.get())) {
        Layer& l = layers_.back();
        l.norm = NormKind::Batch;
        l.gamma = take(bn->weight, l.dgamma);
        l.beta = take(bn->bias, l.dbeta);
        l.running_mean = bn->running_mean;
        l.running_var = bn->running_var;
      } else if (auto* ln = dynamic_cast<nn::LayerNorm*>(m.get())) {
        Layer& l = layers_.back();
        l.norm = NormKind::Layer;
        l.gamma = take(ln->weight, l.dgamma);
        l.beta = take(ln->bias, l.dbeta);
      } else if (dynamic_cast<nn::Tanh*>(m.get())) {
        layers_.back().tanh = true;
      } else {
        throw std::invalid_argument(cat("the hand-written lesson has no layer like the model's ", i));
      }
    }
    int64_t width = 0;
    for (const Layer& l : layers_) width = std::max(width, std::max(l.in, l.out));
    grad_a_ = buffer(max_rows * width);
    grad_b_ = buffer(max_rows * width);
    probs_.resize(size_t(max_rows * layers_.back().out));
  }

  /// One step's forward and backward on rows examples x (rows, in) with class indices
  /// targets (rows): the loss, and every gradient in this object's buffers.
  float forward_backward(const float* x, const float* targets, int64_t rows) {
    const float* logits = forward(x, rows, true);
    float loss = 0.0f;
    timed(Part::Loss, [&] { loss = cross_entropy(logits, targets, rows, true); });
    backward(x, rows);
    return loss;
  }

  /// SGD without momentum, the framework's update: w += -lr * dw.
  void sgd(float lr) {
    auto update = [lr](Tensor& t, const Tensor& g) {
      float* w = t.data();
      const float* dw = g.data();
      for (int64_t i = 0, n = t.numel(); i < n; ++i) w[i] += -lr * dw[i];
    };
    timed(Part::Sgd, [&] {
      for (Layer& l : layers_) {
        update(l.weight, l.dweight);
        if (l.bias.defined()) update(l.bias, l.dbias);
        if (l.gamma.defined()) update(l.gamma, l.dgamma);
        if (l.beta.defined()) update(l.beta, l.dbeta);
      }
    });
  }

  /// From now on, the seconds each part takes are added to *parts (null: not timed), each
  /// kernel call between two reads of the clock.
  void time_parts(PartSeconds* parts) { part_seconds_ = parts; }

  /// Mean loss and accuracy over x (rows, in) in eval mode (BatchNorm's running statistics).
  std::pair<float, float> evaluate(const Tensor& x, const Tensor& targets) {
    const int64_t rows = x.size(0);
    const float* logits = forward(x.data(), rows, false);
    const int64_t classes = layers_.back().out;
    int64_t correct = 0;
    for (int64_t i = 0; i < rows; ++i) {
      const float* row = logits + i * classes;
      correct += std::max_element(row, row + classes) - row == int64_t(targets.data()[i]);
    }
    float loss = 0.0f;
    timed(Part::Loss, [&] { loss = cross_entropy(logits, targets.data(), rows, false); });
    return {loss, float(double(correct) / double(rows))};
  }

 private:
  struct Layer {
    Tensor weight, bias, gamma, beta, running_mean, running_var;  // the model's own storage
    int64_t in = 0, out = 0;
    NormKind norm = NormKind::None;  // the norm after the product, if any
    bool tanh = false;               // a Tanh last (all but the logits)
    Tensor dweight, dbias, dgamma, dbeta;
    Tensor pre, y;                 // (rows, out): the product (+ bias), the tanh output
    Tensor mean, mean_rest, rstd;  // the norm's statistics (rows or out)
    Tensor var;                    // (out) BatchNorm's biased variance
  };

  // Runs f, its time added to `part` when the parts are timed.
  template <typename F>
  void timed(Part part, F&& f) {
    if (part_seconds_ == nullptr) {
      f();
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    f();
    (*part_seconds_)[size_t(part)] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  void product(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, const float* b, float beta,
               float* c) {
    timed(Part::Products, [&] { kernels::gemm(ta, tb, m, n, k, 1.0f, a, b, beta, c); });
  }

  // Buffers as the framework's tensors: 64-byte aligned, as OpenBLAS's kernels see them
  // there; every value is written before it is read.
  static Tensor buffer(int64_t n) { return Tensor::empty({n}); }

  static Tensor take(const Tensor& t, Tensor& grad) {
    grad = buffer(t.numel());
    return t;
  }

  static Layer make_layer(nn::Linear& linear, int64_t max_rows) {
    Layer l;
    l.weight = take(linear.weight, l.dweight);
    if (linear.bias.defined()) l.bias = take(linear.bias, l.dbias);
    l.out = l.weight.size(0);
    l.in = l.weight.size(1);
    l.pre = buffer(max_rows * l.out);
    l.y = buffer(max_rows * l.out);
    l.mean = buffer(std::max(max_rows, l.out));
    l.mean_rest = buffer(std::max(max_rows, l.out));
    l.rstd = buffer(std::max(max_rows, l.out));
    l.var = buffer(l.out);
    return l;
  }

  // tanh's backward and the bias gradient below it in one pass: dpre = dout * (1 - y^2)
  // (rows, cols), y = tanh's output, and, when dbias is not null, dbias = column_sums(dpre),
  // the same bits as the two apart (the framework's TanhBackward, then sum_to_shape).
  static void tanh_backward_column_sums(float* dpre, float* dbias, const float* dout, const float* y, int64_t rows,
                                        int64_t cols) {
    constexpr int64_t kBlock = 256;  // as column_sums: each column summed over the rows in order
    for (int64_t j0 = 0; j0 < cols; j0 += kBlock) {
      const int64_t width = std::min(kBlock, cols - j0);
      double acc[kBlock];  // (width): only these are cleared, not all 256 of a narrow layer
      std::fill_n(acc, width, 0.0);
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t at = i * cols + j0;
        if (dpre == dout) {  // in place: a loop of its own, as one that could alias would not vectorize
          for (int64_t j = 0; j < width; ++j) dpre[at + j] *= 1.0f - y[at + j] * y[at + j];
        } else {
          for (int64_t j = 0; j < width; ++j) {
            const float yj = y[at + j];
            dpre[at + j] = dout[at + j] * (1.0f - yj * yj);
          }
        }
        if (dbias)
          for (int64_t j = 0; j < width; ++j) acc[j] += double(dpre[at + j]);
      }
      if (dbias)
        for (int64_t j = 0; j < width; ++j) dbias[j0 + j] = float(acc[j]);
    }
  }

  static bool has_norm(const Layer& l) { return l.norm != NormKind::None; }

  static kernels::NormStats stats(Layer& l) { return {l.mean.data(), l.mean_rest.data(), l.rstd.data()}; }

  // Returns the logits (rows, classes).
  const float* forward(const float* x, int64_t rows, bool training) {
    const float* in = x;  // (rows, l.in)
    for (Layer& l : layers_) {
      float* pre = l.pre.data();  // (rows, out)
      product(false, true, rows, l.out, l.in, in, l.weight.data(), 0.0f, pre);
      if (l.bias.defined())  // as the framework's linear: the bias onto the product's rows
        timed(Part::BiasAdd, [&] { kernels::add_row_to_rows(pre, l.bias.data(), rows, l.out); });
      if (!l.tanh) return pre;
      const float* normed = pre;
      if (has_norm(l)) {
        timed(Part::NormForward, [&] { normalize(l, rows, training); });
        normed = grad_a_.data();
      }
      timed(Part::Tanh, [&] { kernels::tanh_forward(l.y.data(), normed, rows * l.out); });
      in = l.y.data();
    }
    throw std::logic_error("the hand-written lesson ends in a Tanh, not in logits");
  }

  // The norm of layer l from l.pre into grad_a_ (a scratch until the backward, which
  // normalizes again from l.pre and the statistics).
  void normalize(Layer& l, int64_t rows, bool training) {
    float* out = grad_a_.data();  // (rows, out)
    if (l.norm == NormKind::Layer) {
      kernels::row_norm_forward(out, stats(l), l.pre.data(), l.gamma.data(), l.beta.data(),
                                {.rows = rows, .channels = l.out}, 1e-5);
      return;
    }
    const kernels::ChannelNormLayout layout{.batch = rows, .channels = l.out};
    float *mean = l.mean.data(), *mean_rest = l.mean_rest.data(), *rstd = l.rstd.data();
    float *running_mean = l.running_mean.data(), *running_var = l.running_var.data();
    if (!training) {
      for (int64_t c = 0; c < l.out; ++c) {
        mean[c] = running_mean[c];
        mean_rest[c] = 0.0f;
        rstd[c] = float(1.0 / std::sqrt(double(running_var[c]) + 1e-5));
      }
      kernels::channel_norm_forward(out, l.pre.data(), stats(l), l.gamma.data(), l.beta.data(), layout);
      return;
    }
    kernels::channel_norm_forward_train(out, stats(l), l.var.data(), l.pre.data(), l.gamma.data(), l.beta.data(),
                                        layout, 1e-5);
    const double momentum = 0.1, unbias = double(rows) / double(rows - 1);
    const float* var = l.var.data();
    for (int64_t c = 0; c < l.out; ++c) {
      running_mean[c] = float((1.0 - momentum) * running_mean[c] + momentum * mean[c]);
      running_var[c] = float((1.0 - momentum) * running_var[c] + momentum * var[c] * unbias);
    }
  }

  // The mean cross-entropy of logits (rows, classes); with `gradient`, its gradient into
  // grad_a_ (rows, classes). The framework's arithmetic: exponentials and sums in double.
  float cross_entropy(const float* logits, const float* targets, int64_t rows, bool gradient) {
    const int64_t classes = layers_.back().out;
    double total = 0.0;
    for (int64_t i = 0; i < rows; ++i) {
      const float* row = logits + i * classes;  // (classes)
      double* prob = probs_.data() + i * classes;
      const float top = *std::max_element(row, row + classes);
      for (int64_t j = 0; j < classes; ++j) prob[j] = kernels::exp_nonpositive(double(row[j] - top));
      double sum = 0.0;
      for (int64_t j = 0; j < classes; ++j) sum += prob[j];
      for (int64_t j = 0; j < classes; ++j) prob[j] /= sum;
      const auto t = int64_t(targets[i]);
      total += std::log(sum) - double(row[t] - top);
    }
    if (!gradient) return float(total / double(rows));
    const double scale = 1.0 / double(rows);
    for (int64_t i = 0; i < rows; ++i) {
      float* drow = grad_a_.data() + i * classes;  // (classes)
      for (int64_t j = 0; j < classes; ++j) drow[j] = float(scale * probs_[size_t(i * classes + j)]);
      drow[int64_t(targets[i])] -= float(scale);
    }
    return float(total / double(rows));
  }

  // From the logits' gradient in grad_a_ down to the first layer's weights. Two buffers
  // take turns: `g` holds the gradient at a layer's output, `other` is free.
  void backward(const float* x, int64_t rows) {
    float *g = grad_a_.data(), *other = grad_b_.data();  // (rows, out)
    for (size_t i = layers_.size(); i-- > 0;) {
      Layer& l = layers_[i];
      float* dbias = l.bias.defined() ? l.dbias.data() : nullptr;
      if (l.tanh) {  // through tanh into `other`, with the bias's column sums when no norm follows
        timed(Part::TanhBackward,
              [&] { tanh_backward_column_sums(other, has_norm(l) ? nullptr : dbias, g, l.y.data(), rows, l.out); });
        std::swap(g, other);
      }
      if (has_norm(l)) {
        timed(Part::NormBackward, [&] { denormalize(l, rows, g, other); });
        std::swap(g, other);
      }
      if (dbias && (!l.tanh || has_norm(l)))
        timed(Part::BiasSums, [&] { kernels::column_sums(g, rows, l.out, dbias); });
      // g (rows, out) is now the gradient at the product (+ bias).
      const float* in = i == 0 ? x : layers_[i - 1].y.data();  // (rows, in)
      product(true, false, l.out, l.in, rows, g, in, 0.0f, l.dweight.data());
      if (i == 0) return;
      product(false, false, rows, l.in, l.out, g, l.weight.data(), 0.0f, other);
      std::swap(g, other);
    }
  }

  // The norm's backward: from dnormed (rows, out) to dpre (rows, out).
  void denormalize(Layer& l, int64_t rows, const float* dnormed, float* dpre) {
    if (l.norm == NormKind::Layer) {
      kernels::row_norm_backward(dpre, l.dgamma.data(), l.dbeta.data(), dnormed, l.pre.data(), stats(l), l.gamma.data(),
                                 {.rows = rows, .channels = l.out});
      return;
    }
    kernels::channel_norm_backward(dpre, l.dgamma.data(), l.dbeta.data(), dnormed, l.pre.data(), stats(l),
                                   l.gamma.data(), {.batch = rows, .channels = l.out}, true);
  }

  std::vector<Layer> layers_;
  Tensor grad_a_, grad_b_;     // (rows, width): gradients passed down, in turn
  std::vector<double> probs_;  // (rows, classes)
  PartSeconds* part_seconds_ = nullptr;
};

}  // namespace minidl::bench
