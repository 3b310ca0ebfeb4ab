#include "minidl/ops/norm/batch_norm.hpp"

#include <cmath>

#include "kernels/norm/channel_norm.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/tensor/error.hpp"
#include "row_norm_op.hpp"

namespace minidl {
namespace {

// running = (1 - momentum) running + momentum batch, running_var with the unbiased
// variance (the batch itself is normalized with the biased one).
void update_running_stats(const Tensor& running_mean, const Tensor& running_var, const float* mean, const Tensor& var,
                          int64_t count, double momentum) {
  Tensor rm_handle = running_mean, rv_handle = running_var;  // updated in place, no graph
  float* rm = rm_handle.data();
  float* rv = rv_handle.data();
  const float* v = var.data();
  const double unbias = double(count) / double(count - 1);
  for (int64_t c = 0, channels = var.numel(); c < channels; ++c) {  // numel once, not per channel
    rm[c] = float((1.0 - momentum) * rm[c] + momentum * mean[c]);
    rv[c] = float((1.0 - momentum) * rv[c] + momentum * v[c] * unbias);
  }
  rm_handle.bump_version();
  rv_handle.bump_version();
}

// An empty batch (N or a position count of 0): PyTorch returns an empty result and leaves
// the running statistics as they are; weight and bias get zero gradients.
Tensor empty_batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t channels) {
  return record(Tensor::empty(x.shape()), "NativeBatchNorm", {x, weight, bias},
                [shape = x.shape(), channels, w = weight.defined(), b = bias.defined()](const Tensor&) {
                  return std::vector<Tensor>{Tensor::empty(shape), w ? Tensor::zeros({channels}) : Tensor(),
                                             b ? Tensor::zeros({channels}) : Tensor()};
                });
}

}  // namespace

kernels::ChannelNormLayout detail::channel_layout(const char* op, const Tensor& x) {
  if (x.dim() < 2)
    throw Error(cat(op, ": expected an input of shape (N, C, *) with at least 2 dims, got ", to_string(x.shape())));
  const int64_t n = x.size(0), c = x.size(1);
  return {.batch = n, .channels = c, .inner = n * c == 0 ? 0 : x.numel() / (n * c)};
}

void detail::check_batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                              const Tensor& weight, const Tensor& bias, bool training) {
  const kernels::ChannelNormLayout layout = detail::channel_layout("batch_norm", x);
  check_channel_tensors("batch_norm", running_mean, running_var, weight, bias, layout.channels, x);
  if (training && layout.per_channel() == 1)
    throw Error(cat("Expected more than 1 value per channel when training, got input size ", to_string(x.shape())));
  if (!training && !running_mean.defined())
    throw Error("batch_norm: running_mean and running_var are required when not training");
}

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  detail::check_batch_norm(x, running_mean, running_var, weight, bias, training);
  const kernels::ChannelNormLayout layout = detail::channel_layout("batch_norm", x);
  const Shape channels{layout.channels};
  if (x.numel() == 0) return empty_batch_norm(x, weight, bias, layout.channels);

  // (3, C): mean, mean_rest, rstd; the forward's statistics, saved for the backward
  Tensor saved_stats = Tensor::empty({3, layout.channels});
  const kernels::NormStats stats = detail::stats_rows(saved_stats.data(), true, layout.channels);
  Tensor out = Tensor::empty(x.shape());
  if (training) {
    Tensor var = detail::empty_if(running_mean.defined(), channels);  // (C) biased
    kernels::channel_norm_forward_train(out.data(), stats, detail::data_or_null(var), x.data(),
                                        detail::data_or_null(weight), detail::data_or_null(bias), layout, eps);
    if (running_mean.defined())
      update_running_stats(running_mean, running_var, stats.mean, var, layout.per_channel(), momentum);
  } else {  // copies: the running statistics may move before this graph's backward runs
    for (int64_t c = 0; c < layout.channels; ++c) {
      stats.mean[c] = running_mean.data()[c];
      stats.mean_rest[c] = 0.0f;
      stats.rstd[c] = float(1.0 / std::sqrt(double(running_var.data()[c]) + eps));
    }
    kernels::channel_norm_forward(out.data(), x.data(), stats, detail::data_or_null(weight), detail::data_or_null(bias),
                                  layout);
  }

  const bool want_x = needs_grad({x}), want_w = needs_grad({weight}), want_b = needs_grad({bias});
  if (!want_x && !want_w && !want_b) return out;
  const SavedTensor saved_x(x);
  const SavedTensor saved_w = weight.defined() ? SavedTensor(weight) : SavedTensor();
  return record(out, "NativeBatchNorm", {x, weight, bias},
                [=, shape = x.shape()](const Tensor& g) -> std::vector<Tensor> {
                  Tensor dx = detail::empty_if(want_x, shape);
                  Tensor dw = detail::empty_if(want_w, channels);
                  Tensor db = detail::empty_if(want_b, channels);
                  Tensor stats_handle = saved_stats;  // read only
                  kernels::channel_norm_backward(detail::data_or_null(dx), detail::data_or_null(dw),
                                                 detail::data_or_null(db), g.data(), saved_x.unpack().data(),
                                                 detail::stats_rows(stats_handle.data(), true, layout.channels),
                                                 detail::data_or_null(saved_w.unpack()), layout, training);
                  return {dx, dw, db};
                });
}

}  // namespace minidl
