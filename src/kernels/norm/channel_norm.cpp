#include "minidl/kernels/norm/channel_norm.hpp"

#include <algorithm>
#include <cmath>

#include "minidl/kernels/broadcast.hpp"
#include "minidl/kernels/lane_sum.hpp"

namespace minidl::kernels {
namespace {

// Channels are handled in blocks of this many, one block per OpenMP iteration. Within a
// block the data is read row by row (memory order): with inner == 1 (BatchNorm1d on
// (N, C)) a channel's values are C floats apart, and walking one channel at a time would
// touch a new cache line, often a new page, for every value.
constexpr int64_t kBlock = 64;

int64_t block_count(const ChannelNormLayout& l) { return (l.channels + kBlock - 1) / kBlock; }

bool run_parallel(const ChannelNormLayout& l) {
  return block_count(l) > 1 && l.batch * l.channels * l.inner > kParallelElements;
}

// sums[c] = sum of f(i, c) over the values i of channel c0 + c, for c < width, each
// channel in a fixed order (batch by batch; lane sums within a batch's inner values).
template <typename F>
void channel_sums(const ChannelNormLayout& l, int64_t c0, int64_t width, double* sums, F f) {
  std::fill_n(sums, width, 0.0);
  for (int64_t n = 0; n < l.batch; ++n) {
    const int64_t row = (n * l.channels + c0) * l.inner;
    if (l.inner == 1) {
      for (int64_t c = 0; c < width; ++c) sums[c] += f(row + c, c);
    } else {
      for (int64_t c = 0; c < width; ++c)
        sums[c] += lane_sum(l.inner, [&](int64_t s) { return f(row + c * l.inner + s, c); });
    }
  }
}

// Calls f(i, c) for every value i of channels c0 .. c0 + width - 1 (c counts from 0), in
// memory order.
template <typename F>
void for_each_in_block(const ChannelNormLayout& l, int64_t c0, int64_t width, F f) {
  for (int64_t n = 0; n < l.batch; ++n) {
    const int64_t row = (n * l.channels + c0) * l.inner;
    if (l.inner == 1) {
      for (int64_t c = 0; c < width; ++c) f(row + c, c);
    } else {
      for (int64_t c = 0; c < width; ++c)
        for (int64_t s = 0; s < l.inner; ++s) f(row + c * l.inner + s, c);
    }
  }
}

// Per-channel constants of out = ((x - m) - m_rest) * rs * w + b for one block.
struct BlockAffine {
  float m[kBlock], m_rest[kBlock], scale[kBlock], shift[kBlock];
};

// out = ((x - m_float) - m_rest) * rs * w + b, with m = m_float + m_rest: x - m_float is
// exact for x near m, so a mean of 1e4 against a spread of 1e-1 loses nothing to float's
// rounding of the mean.
void normalize_block(float* out, const float* x, const BlockAffine& a, const ChannelNormLayout& l, int64_t c0,
                     int64_t width) {
  for_each_in_block(l, c0, width, [&](int64_t i, int64_t c) {
    out[i] = ((x[i] - a.m[c]) - a.m_rest[c]) * a.scale[c] + a.shift[c];
  });
}

}  // namespace

void channel_norm_forward_train(float* out, float* mean, float* rstd, float* var, const float* x,
                                const float* weight, const float* bias, const ChannelNormLayout& l, double eps) {
  const double count = double(l.per_channel());
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t b = 0; b < block_count(l); ++b) {
    const int64_t c0 = b * kBlock, width = std::min(kBlock, l.channels - c0);
    double m[kBlock], squares[kBlock];  // (width)
    channel_sums(l, c0, width, m, [&](int64_t i, int64_t) { return double(x[i]); });
    for (int64_t c = 0; c < width; ++c) m[c] /= count;
    channel_sums(l, c0, width, squares, [&](int64_t i, int64_t c) {
      const double d = double(x[i]) - m[c];
      return d * d;
    });
    BlockAffine a;
    for (int64_t c = 0; c < width; ++c) {
      const float rs = float(1.0 / std::sqrt(squares[c] / count + eps));
      a.m[c] = float(m[c]);
      a.m_rest[c] = float(m[c] - double(a.m[c]));
      a.scale[c] = rs * (weight ? weight[c0 + c] : 1.0f);
      a.shift[c] = bias ? bias[c0 + c] : 0.0f;
      mean[c0 + c] = a.m[c];
      rstd[c0 + c] = rs;
      if (var) var[c0 + c] = float(squares[c] / count);
    }
    normalize_block(out, x, a, l, c0, width);
  }
}

void channel_norm_forward(float* out, const float* x, const float* mean, const float* rstd, const float* weight,
                          const float* bias, const ChannelNormLayout& l) {
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t b = 0; b < block_count(l); ++b) {
    const int64_t c0 = b * kBlock, width = std::min(kBlock, l.channels - c0);
    BlockAffine a;
    for (int64_t c = 0; c < width; ++c) {
      a.m[c] = mean[c0 + c];
      a.m_rest[c] = 0.0f;
      a.scale[c] = rstd[c0 + c] * (weight ? weight[c0 + c] : 1.0f);
      a.shift[c] = bias ? bias[c0 + c] : 0.0f;
    }
    normalize_block(out, x, a, l, c0, width);
  }
}

// With xhat = (x - mean) * rstd over the n values of a channel (batch statistics):
//   dx = weight * rstd * (dy - mean(dy) - xhat * mean(dy * xhat))
// and the two sums are also dbias and dweight. With fixed statistics dx = weight * rstd * dy.
void channel_norm_backward(float* dx, float* dweight, float* dbias, const float* dy, const float* x,
                           const float* mean, const float* rstd, const float* weight,
                           const ChannelNormLayout& l, bool batch_stats) {
  const double count = double(l.per_channel());
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t b = 0; b < block_count(l); ++b) {
    const int64_t c0 = b * kBlock, width = std::min(kBlock, l.channels - c0);
    const float* m = mean + c0;   // (width)
    const float* rs = rstd + c0;  // (width)
    double sum_dy[kBlock], sum_dy_xhat[kBlock];  // (width)
    channel_sums(l, c0, width, sum_dy, [&](int64_t i, int64_t) { return double(dy[i]); });
    channel_sums(l, c0, width, sum_dy_xhat,
                 [&](int64_t i, int64_t c) { return double(dy[i]) * double((x[i] - m[c]) * rs[c]); });
    for (int64_t c = 0; c < width; ++c) {
      if (dweight) dweight[c0 + c] = float(sum_dy_xhat[c]);
      if (dbias) dbias[c0 + c] = float(sum_dy[c]);
    }
    if (!dx) continue;
    float scale[kBlock], mean_dy[kBlock], mean_dy_xhat[kBlock];  // (width)
    for (int64_t c = 0; c < width; ++c) {
      scale[c] = (weight ? weight[c0 + c] : 1.0f) * rs[c];
      mean_dy[c] = float(sum_dy[c] / count);
      mean_dy_xhat[c] = float(sum_dy_xhat[c] / count);
    }
    if (!batch_stats) {
      for_each_in_block(l, c0, width, [&](int64_t i, int64_t c) { dx[i] = scale[c] * dy[i]; });
      continue;
    }
    for_each_in_block(l, c0, width, [&](int64_t i, int64_t c) {
      dx[i] = scale[c] * (dy[i] - mean_dy[c] - (x[i] - m[c]) * rs[c] * mean_dy_xhat[c]);
    });
  }
}

}  // namespace minidl::kernels
