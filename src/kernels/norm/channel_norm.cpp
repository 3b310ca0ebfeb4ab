#include "minidl/kernels/norm/channel_norm.hpp"

#include <algorithm>
#include <cmath>

#include "minidl/kernels/broadcast.hpp"
#include "minidl/kernels/norm/lane_sum.hpp"

namespace minidl::kernels {
namespace {


// Channels go in blocks, one block per loop iteration (and thread). With inner == 1 (an
// (N, C) input) a block of up to 512 channels sweeps the rows, so loads are contiguous and
// vectorize across channels; otherwise a block is one channel and its runs of `inner`
// values are contiguous. Blocks are wide because each row's piece must be long enough for
// the hardware prefetcher: 64 channels of a (4096, 1024) input were 256 bytes every 4 KiB,
// and the sweep waited on memory for every row.
constexpr int64_t kBlock = 512;

struct Block {
  int64_t c0, width;
};

int64_t block_width(const ChannelNormLayout& l) { return l.inner == 1 ? kBlock : 1; }
int64_t block_count(const ChannelNormLayout& l) { return (l.channels + block_width(l) - 1) / block_width(l); }
Block block_at(const ChannelNormLayout& l, int64_t b) {
  const int64_t c0 = b * block_width(l);
  return {c0, std::min(block_width(l), l.channels - c0)};
}

// Several threads only when there is enough work and more than one block to share.
bool run_parallel(const ChannelNormLayout& l) {
  return block_count(l) > 1 && l.batch * l.channels * l.inner > kParallelElements;
}

// acc[k] += sum of f(i, k) over the values i of channel c0 + k, always in the order n, s.
template <typename F>
inline void block_sums(const ChannelNormLayout& l, Block blk, double* acc, F f) {
  if (l.inner == 1) {
    for (int64_t n = 0; n < l.batch; ++n) {
      const int64_t row = n * l.channels + blk.c0;
      for (int64_t k = 0; k < blk.width; ++k) acc[k] += double(f(row + k, k));
    }
    return;
  }
  for (int64_t n = 0; n < l.batch; ++n) {
    const int64_t start = (n * l.channels + blk.c0) * l.inner;
    acc[0] += lane_sum(l.inner, [&](int64_t s) { return f(start + s, 0); });
  }
}

// Calls f(i, k) for every value i of channel c0 + k.
template <typename F>
inline void block_apply(const ChannelNormLayout& l, Block blk, F f) {
  if (l.inner == 1) {  // a flat loop over the block's channels, vectorized
    for (int64_t n = 0; n < l.batch; ++n) {
      const int64_t row = n * l.channels + blk.c0;
      for (int64_t k = 0; k < blk.width; ++k) f(row + k, k);
    }
    return;
  }
  for (int64_t n = 0; n < l.batch; ++n)
    for (int64_t k = 0; k < blk.width; ++k) {
      const int64_t start = (n * l.channels + blk.c0 + k) * l.inner;
      for (int64_t s = 0; s < l.inner; ++s) f(start + s, k);
    }
}

// The per-channel constants of one block: out = ((x - m) - m_rest) * scale + shift with
// m + m_rest the mean (x - m is exact for x near m, so a mean of 1e4 against a spread
// of 1e-1 loses nothing to float's rounding of the mean) and scale = rstd * weight.
struct Affine {
  float m[kBlock], m_rest[kBlock], scale[kBlock], shift[kBlock];
};

void normalize_block(float* out, const float* x, const Affine& a, const ChannelNormLayout& l, Block blk) {
  block_apply(l, blk, [&](int64_t i, int64_t k) { out[i] = ((x[i] - a.m[k]) - a.m_rest[k]) * a.scale[k] + a.shift[k]; });
}

}  // namespace

void channel_norm_forward_train(float* out, float* mean, float* rstd, float* var, const float* x,
                                const float* weight, const float* bias, const ChannelNormLayout& l, double eps) {
  const double count = double(l.per_channel());
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t b = 0; b < block_count(l); ++b) {
    const Block blk = block_at(l, b);
    double sums[kBlock] = {}, squares[kBlock] = {};  // (width)
    block_sums(l, blk, sums, [&](int64_t i, int64_t) { return x[i]; });
    double m[kBlock];
    for (int64_t k = 0; k < blk.width; ++k) m[k] = sums[k] / count;
    block_sums(l, blk, squares, [&](int64_t i, int64_t k) {  // two passes: never E[x^2] - E[x]^2
      const double d = double(x[i]) - m[k];
      return d * d;
    });
    Affine a;
    for (int64_t k = 0; k < blk.width; ++k) {
      const int64_t c = blk.c0 + k;
      const float rs = float(1.0 / std::sqrt(squares[k] / count + eps));
      a.m[k] = mean[c] = float(m[k]);
      a.m_rest[k] = float(m[k] - double(a.m[k]));
      rstd[c] = rs;
      if (var) var[c] = float(squares[k] / count);
      a.scale[k] = rs * (weight ? weight[c] : 1.0f);
      a.shift[k] = bias ? bias[c] : 0.0f;
    }
    normalize_block(out, x, a, l, blk);
  }
}

void channel_norm_forward(float* out, const float* x, const float* mean, const float* rstd, const float* weight,
                          const float* bias, const ChannelNormLayout& l) {
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t b = 0; b < block_count(l); ++b) {
    const Block blk = block_at(l, b);
    Affine a;
    for (int64_t k = 0; k < blk.width; ++k) {
      const int64_t c = blk.c0 + k;
      a.m[k] = mean[c];
      a.m_rest[k] = 0.0f;
      a.scale[k] = rstd[c] * (weight ? weight[c] : 1.0f);
      a.shift[k] = bias ? bias[c] : 0.0f;
    }
    normalize_block(out, x, a, l, blk);
  }
}

// With xhat = (x - mean) * rstd over the n values of a channel (batch statistics):
//   dx = weight * rstd * (dy - mean(dy) - xhat * mean(dy * xhat))
// and the two sums are also dbias and dweight. With fixed statistics dx = weight * rstd * dy.
// The saved batch mean is the true mean rounded to float; with a mean of 1e4 against a
// spread of 1e-1 that shifts every xhat by up to 5e-3. Batch xhat sums to 0 per channel,
// so its mean over the channel (`offset`) is exactly that shift, removed here.
void channel_norm_backward(float* dx, float* dweight, float* dbias, const float* dy, const float* x,
                           const float* mean, const float* rstd, const float* weight,
                           const ChannelNormLayout& l, bool batch_stats) {
  const double count = double(l.per_channel());
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t b = 0; b < block_count(l); ++b) {
    const Block blk = block_at(l, b);
    const float* m = mean + blk.c0;  // (width)
    const float* rs = rstd + blk.c0;  // (width)
    double sum_xhat[kBlock] = {}, sum_dy[kBlock] = {}, sum_dy_xhat[kBlock] = {};  // (width)
    float offset[kBlock] = {};
    if (batch_stats) {
      block_sums(l, blk, sum_xhat, [&](int64_t i, int64_t k) { return (x[i] - m[k]) * rs[k]; });
      for (int64_t k = 0; k < blk.width; ++k) offset[k] = float(sum_xhat[k] / count);
    }
    auto xhat = [&](int64_t i, int64_t k) { return (x[i] - m[k]) * rs[k] - offset[k]; };
    block_sums(l, blk, sum_dy, [&](int64_t i, int64_t) { return dy[i]; });
    block_sums(l, blk, sum_dy_xhat, [&](int64_t i, int64_t k) { return double(dy[i]) * double(xhat(i, k)); });
    float scale[kBlock], mean_dy[kBlock], mean_dy_xhat[kBlock];
    for (int64_t k = 0; k < blk.width; ++k) {
      const int64_t c = blk.c0 + k;
      if (dweight) dweight[c] = float(sum_dy_xhat[k]);
      if (dbias) dbias[c] = float(sum_dy[k]);
      scale[k] = (weight ? weight[c] : 1.0f) * rs[k];
      mean_dy[k] = batch_stats ? float(sum_dy[k] / count) : 0.0f;
      mean_dy_xhat[k] = batch_stats ? float(sum_dy_xhat[k] / count) : 0.0f;
    }
    if (!dx) continue;
    block_apply(l, blk, [&](int64_t i, int64_t k) {
      dx[i] = scale[k] * (dy[i] - mean_dy[k] - xhat(i, k) * mean_dy_xhat[k]);
    });
  }
}

}  // namespace minidl::kernels
