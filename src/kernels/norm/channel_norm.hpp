#pragma once
// Per-channel normalization kernels (BatchNorm): plain loops, no autograd. The input is
// seen as (batch, channels, inner): (N, C) has inner 1, (N, C, L) inner L, (N, C, H, W)
// inner H * W. Sums run over fixed chunks of batch items (OpenMP above a size threshold),
// merged in a fixed order: the same bits whatever the thread count.
#include <cstdint>

#include "kernels/norm/norm_stats.hpp"

namespace minidl::kernels {

struct ChannelNormLayout {
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t inner = 1;
  int64_t per_channel() const { return batch * inner; }
};

/// Training: normalizes each channel with its batch mean and biased variance (two passes,
/// never E[x^2] - E[x]^2): out = (x - mean) * rstd * weight + bias. Writes the stats the
/// backward needs (per channel), and var (C), the biased variance, when not null.
/// weight and bias may be null.
void channel_norm_forward_train(float* out, const NormStats& stats, float* var, const float* x, const float* weight,
                                const float* bias, const ChannelNormLayout& layout, double eps);

/// Eval: out = (x - mean[c]) * rstd[c] * weight[c] + bias[c] with given statistics
/// (stats.mean_rest may be null: taken as 0).
void channel_norm_forward(float* out, const float* x, const NormStats& stats, const float* weight, const float* bias,
                          const ChannelNormLayout& layout);

/// Gradients of channel_norm_forward, each written (not accumulated) when not null.
/// batch_stats: the stats were computed from x itself (training), so dx carries the
/// terms through them; otherwise they were constants (running statistics in eval).
void channel_norm_backward(float* dx, float* dweight, float* dbias, const float* dy, const float* x,
                           const NormStats& stats, const float* weight, const ChannelNormLayout& layout,
                           bool batch_stats);

}  // namespace minidl::kernels
