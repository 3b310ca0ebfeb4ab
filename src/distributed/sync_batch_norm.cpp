#include "minidl/distributed/sync_batch_norm.hpp"

#include <vector>

#include "kernels/norm/channel_norm.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/distributed/collectives.hpp"
#include "minidl/distributed/environment.hpp"
#include "minidl/nn/sequential.hpp"
#include "minidl/tensor/error.hpp"
#include "ops/norm/row_norm_op.hpp"

namespace minidl::distributed {
namespace {

// One rank's (or a merged group's) statistics of one channel.
struct ChannelMoments {
  double count = 0.0, mean = 0.0, m2 = 0.0;  // m2: sum of (x - mean)^2
};

// Chan, Golub and LeVeque's pairwise update: the moments of a and b together.
ChannelMoments merge(const ChannelMoments& a, const ChannelMoments& b) {
  if (b.count == 0.0) return a;
  if (a.count == 0.0) return b;
  const double n = a.count + b.count, delta = b.mean - a.mean;
  return {n, a.mean + delta * b.count / n, a.m2 + b.m2 + delta * delta * a.count * b.count / n};
}

// This rank's per-channel count, mean and m2 in double, two passes (never E[x^2] - E[x]^2).
// Packed for the gather as [count, mean (C), m2 (C)].
std::vector<double> local_moments(const float* x, const kernels::ChannelNormLayout& l) {
  const int64_t C = l.channels;
  std::vector<double> packed(size_t(1 + 2 * C), 0.0);
  packed[0] = double(l.per_channel());
  double* mean = packed.data() + 1;
  double* m2 = mean + C;
  for (int64_t n = 0; n < l.batch; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0, at = (n * C + c) * l.inner; i < l.inner; ++i) mean[c] += double(x[at + i]);
  if (packed[0] == 0.0) return packed;
  for (int64_t c = 0; c < C; ++c) mean[c] /= packed[0];
  for (int64_t n = 0; n < l.batch; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0, at = (n * C + c) * l.inner; i < l.inner; ++i) {
        const double d = double(x[at + i]) - mean[c];
        m2[c] += d * d;
      }
  return packed;
}

// Every rank's moments merged in rank order: the same bits on every rank.
std::vector<ChannelMoments> global_moments(const float* x, const kernels::ChannelNormLayout& l) {
  const std::vector<double> all = all_gather(local_moments(x, l));
  const size_t C = size_t(l.channels), stride = 1 + 2 * C;
  std::vector<ChannelMoments> merged(C);
  for (size_t r = 0; r * stride < all.size(); ++r) {
    const double* part = all.data() + r * stride;
    for (size_t c = 0; c < C; ++c) merged[c] = merge(merged[c], {part[0], part[1 + c], part[1 + C + c]});
  }
  return merged;
}

void update_running(const Tensor& running_mean, const Tensor& running_var, const std::vector<ChannelMoments>& m,
                    double momentum) {
  Tensor rm = running_mean, rv = running_var;  // in place, no graph
  for (size_t c = 0; c < m.size(); ++c) {
    rm.data()[c] = float((1.0 - momentum) * rm.data()[c] + momentum * m[c].mean);
    rv.data()[c] = float((1.0 - momentum) * rv.data()[c] + momentum * m[c].m2 / (m[c].count - 1.0));
  }
  rm.bump_version();
  rv.bump_version();
}

// Per channel, over this rank's shard: sums[c] = sum dy, sums[C + c] = sum dy * x_hat.
std::vector<double> local_grad_sums(const float* dy, const float* x, const kernels::NormStats& stats,
                                    const kernels::ChannelNormLayout& l) {
  const int64_t C = l.channels;
  std::vector<double> sums(size_t(2 * C), 0.0);
  for (int64_t n = 0; n < l.batch; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const kernels::Moments m = kernels::Moments::load(stats, c);
      for (int64_t i = 0, at = (n * C + c) * l.inner; i < l.inner; ++i) {
        sums[size_t(c)] += double(dy[at + i]);
        sums[size_t(C + c)] += double(dy[at + i]) * double(m.centered(x[at + i]) * m.rstd);
      }
    }
  return sums;
}

// dx = weight * rstd * (dy - sum(dy) / n - x_hat * sum(dy * x_hat) / n), sums and n global.
void input_grad(float* dx, const float* dy, const float* x, const kernels::NormStats& stats, const float* weight,
                const std::vector<double>& global_sums, double count, const kernels::ChannelNormLayout& l) {
  const int64_t C = l.channels;
  for (int64_t n = 0; n < l.batch; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const kernels::Moments m = kernels::Moments::load(stats, c);
      const float scale = (weight ? weight[c] : 1.0f) * m.rstd;
      const float mean_dy = float(global_sums[size_t(c)] / count);
      const float mean_dy_xhat = float(global_sums[size_t(C + c)] / count);
      for (int64_t i = 0, at = (n * C + c) * l.inner; i < l.inner; ++i) {
        const float x_hat = m.centered(x[at + i]) * m.rstd;
        dx[at + i] = scale * (dy[at + i] - mean_dy - x_hat * mean_dy_xhat);
      }
    }
}

}  // namespace

Tensor sync_batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                       const Tensor& bias, double momentum, double eps) {
  const kernels::ChannelNormLayout layout = detail::channel_layout("sync_batch_norm", x);
  const int64_t C = layout.channels;
  const Shape channels{C};
  detail::check_channel_tensors("sync_batch_norm", running_mean, running_var, weight, bias, C, x);

  const std::vector<ChannelMoments> moments = global_moments(x.data(), layout);
  const double count = C > 0 ? moments[0].count : 0.0;
  if (count <= 1.0)
    throw Error(cat("Expected more than 1 value per channel when training, got input size ", to_string(x.shape()),
                    " on rank ", rank(), " and ", count, " values per channel over all ", world_size(), " ranks"));

  Tensor saved_stats = Tensor::empty({3, C});  // (3, C): mean, mean_rest, rstd of the global batch
  const kernels::NormStats stats = detail::stats_rows(saved_stats.data(), true, C);
  for (int64_t c = 0; c < C; ++c) {
    kernels::Moments m = kernels::Moments::around(moments[size_t(c)].mean);
    m.set_variance(moments[size_t(c)].m2 / count, eps);  // biased, as BatchNorm normalizes
    m.store(stats, c);
  }
  Tensor out = Tensor::empty(x.shape());
  kernels::channel_norm_forward(out.data(), x.data(), stats, detail::data_or_null(weight), detail::data_or_null(bias),
                                layout);
  if (running_mean.defined()) update_running(running_mean, running_var, moments, momentum);

  const bool want_x = needs_grad({x}), want_w = needs_grad({weight}), want_b = needs_grad({bias});
  if (!want_x && !want_w && !want_b) return out;
  const SavedTensor saved_x(x);
  const SavedTensor saved_w = weight.defined() ? SavedTensor(weight) : SavedTensor();
  return record(out, "SyncBatchNorm", {x, weight, bias},
                [=, shape = x.shape()](const Tensor& g) -> std::vector<Tensor> {
                  Tensor stats_handle = saved_stats;  // read only
                  const kernels::NormStats s = detail::stats_rows(stats_handle.data(), true, C);
                  const Tensor x_value = saved_x.unpack();
                  std::vector<double> sums = local_grad_sums(g.data(), x_value.data(), s, layout);
                  Tensor dx, dw, db;
                  if (want_w) dw = Tensor::empty(channels);
                  if (want_b) db = Tensor::empty(channels);
                  for (int64_t c = 0; c < C; ++c) {  // weight and bias: this rank's shard (DDP averages them)
                    if (want_w) dw.data()[c] = float(sums[size_t(C + c)]);
                    if (want_b) db.data()[c] = float(sums[size_t(c)]);
                  }
                  if (want_x) {
                    all_reduce(std::span<double>(sums));
                    dx = Tensor::empty(shape);
                    input_grad(dx.data(), g.data(), x_value.data(), s, detail::data_or_null(saved_w.unpack()), sums,
                               count, layout);
                  }
                  return {dx, dw, db};
                });
}

Tensor SyncBatchNorm::forward(const Tensor& input) {
  check_input_dim(input);
  if (!is_training()) return BatchNormBase::forward(input);  // running statistics: nothing to synchronize
  const nn::BatchNormOptions& o = options();
  if (input.size(1) != o.num_features)
    throw Error(cat("SyncBatchNorm(", o.num_features, "): expected input with ", o.num_features,
                    " channels in dim 1, got input of shape ", to_string(input.shape())));
  double factor = o.momentum.value_or(0.0);
  if (o.track_running_stats) {
    num_batches_tracked.data()[0] += 1.0f;
    if (!o.momentum) factor = 1.0 / double(num_batches_tracked.data()[0]);
  }
  return sync_batch_norm(input, running_mean, running_var, weight, bias, factor, o.eps);
}

void SyncBatchNorm::check_input_dim(const Tensor& input) const {
  if (input.dim() < 2)
    throw Error(cat("SyncBatchNorm: expected at least 2D input (got ", input.dim(), "D input of shape ",
                    to_string(input.shape()), ")"));
}

namespace {

bool holds_batch_norm(const nn::Module& module) {
  for (const auto& child : module.named_children())
    if (dynamic_cast<const nn::BatchNormBase*>(child.second.get()) || holds_batch_norm(*child.second)) return true;
  return false;
}

}  // namespace

std::shared_ptr<nn::Module> convert_sync_batchnorm(const std::shared_ptr<nn::Module>& module) {
  if (const auto* bn = dynamic_cast<const nn::BatchNormBase*>(module.get());
      bn && !dynamic_cast<const SyncBatchNorm*>(bn)) {
    auto sync = std::make_shared<SyncBatchNorm>(bn->options());
    sync->load_state_dict(bn->state_dict());
    sync->train(bn->is_training());
    return sync;
  }
  if (const auto* seq = dynamic_cast<const nn::Sequential*>(module.get())) {
    auto converted = std::make_shared<nn::Sequential>();
    for (size_t i = 0; i < seq->size(); ++i) converted->push_back(convert_sync_batchnorm((*seq)[i]));
    converted->train(seq->is_training());
    return converted;
  }
  if (holds_batch_norm(*module))
    throw Error(cat("convert_sync_batchnorm: ", module->type_name(),
                    " holds a BatchNorm, but only a BatchNorm itself or the children of a Sequential can be "
                    "replaced"));
  return module;
}

}  // namespace minidl::distributed
