#include "minidl/kernels/norm/channel_norm.hpp"

#include <cmath>

#include "minidl/kernels/broadcast.hpp"

namespace minidl::kernels {
namespace {

bool run_parallel(const ChannelNormLayout& l) {
  return l.channels > 1 && l.batch * l.channels * l.inner > kParallelElements;
}

// Calls f(i) for the flat index of every value of channel c, in a fixed order.
template <typename F>
inline void for_each_in_channel(const ChannelNormLayout& l, int64_t c, F f) {
  for (int64_t n = 0; n < l.batch; ++n) {
    const int64_t start = (n * l.channels + c) * l.inner;
    for (int64_t s = 0; s < l.inner; ++s) f(start + s);
  }
}

// out = (x - m) * rs * w + b over channel c, with m = m_float + m_rest: x - m_float is
// exact for x near m, so a mean of 1e4 against a spread of 1e-1 loses nothing to float's
// rounding of the mean.
void normalize_channel(float* out, const float* x, int64_t c, float m_float, float m_rest, float rs,
                       const float* weight, const float* bias, const ChannelNormLayout& l) {
  const float w = weight ? weight[c] : 1.0f;
  const float b = bias ? bias[c] : 0.0f;
  for_each_in_channel(l, c, [&](int64_t i) { out[i] = ((x[i] - m_float) - m_rest) * rs * w + b; });
}

}  // namespace

void channel_norm_forward_train(float* out, float* mean, float* rstd, float* var, const float* x,
                                const float* weight, const float* bias, const ChannelNormLayout& l, double eps) {
  const double count = double(l.per_channel());
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t c = 0; c < l.channels; ++c) {
    double m = 0.0;
    for_each_in_channel(l, c, [&](int64_t i) { m += x[i]; });
    m /= count;
    double squares = 0.0;
    for_each_in_channel(l, c, [&](int64_t i) {
      const double d = double(x[i]) - m;
      squares += d * d;
    });
    const float m_float = float(m), rs = float(1.0 / std::sqrt(squares / count + eps));
    mean[c] = m_float;
    rstd[c] = rs;
    if (var) var[c] = float(squares / count);
    normalize_channel(out, x, c, m_float, float(m - double(m_float)), rs, weight, bias, l);
  }
}

void channel_norm_forward(float* out, const float* x, const float* mean, const float* rstd, const float* weight,
                          const float* bias, const ChannelNormLayout& l) {
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t c = 0; c < l.channels; ++c) normalize_channel(out, x, c, mean[c], 0.0f, rstd[c], weight, bias, l);
}

// With xhat = (x - mean) * rstd over the n values of a channel (batch statistics):
//   dx = weight * rstd * (dy - mean(dy) - xhat * mean(dy * xhat))
// and the two sums are also dbias and dweight. With fixed statistics dx = weight * rstd * dy.
void channel_norm_backward(float* dx, float* dweight, float* dbias, const float* dy, const float* x,
                           const float* mean, const float* rstd, const float* weight,
                           const ChannelNormLayout& l, bool batch_stats) {
  const double count = double(l.per_channel());
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t c = 0; c < l.channels; ++c) {
    const float m = mean[c], rs = rstd[c];
    double sum_dy = 0.0, sum_dy_xhat = 0.0;
    for_each_in_channel(l, c, [&](int64_t i) {
      sum_dy += dy[i];
      sum_dy_xhat += double(dy[i]) * double((x[i] - m) * rs);
    });
    if (dweight) dweight[c] = float(sum_dy_xhat);
    if (dbias) dbias[c] = float(sum_dy);
    if (!dx) continue;
    const float scale = (weight ? weight[c] : 1.0f) * rs;
    if (!batch_stats) {
      for_each_in_channel(l, c, [&](int64_t i) { dx[i] = scale * dy[i]; });
      continue;
    }
    const float mean_dy = float(sum_dy / count);
    const float mean_dy_xhat = float(sum_dy_xhat / count);
    for_each_in_channel(l, c, [&](int64_t i) { dx[i] = scale * (dy[i] - mean_dy - (x[i] - m) * rs * mean_dy_xhat); });
  }
}

}  // namespace minidl::kernels
