#include "minidl/kernels/norm/channel_norm.hpp"

#include <algorithm>

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

// total[j][k] = the sum of the K values f(at, k, v) writes to v[0..K) over the values of
// channel c0 + k (`at` loads them, see lane_sum.hpp). (N, C): each channel's float accumulator takes kLaneRun rows, then joins
// its double total; the loop runs across the block's channels (contiguous, vectorized).
// (N, C, L): one channel, its runs of L values through LaneSums. Either way a fixed order.
template <int K, typename F>
inline void block_sums(const ChannelNormLayout& l, Block blk, double (&total)[K][kBlock], F f) {
  if (l.inner == 1) {
    for (int j = 0; j < K; ++j) std::fill(total[j], total[j] + blk.width, 0.0);
    float acc[K][kBlock];  // (K, width)
    for (int64_t n0 = 0; n0 < l.batch; n0 += kLaneRun) {
      for (int j = 0; j < K; ++j) std::fill(acc[j], acc[j] + blk.width, 0.0f);
      for (int64_t n = n0; n < std::min(l.batch, n0 + kLaneRun); ++n) {
        const int64_t row = n * l.channels + blk.c0;
        for (int64_t k = 0; k < blk.width; ++k) {
          float v[K];
          f(ScalarAt{row + k}, k, v);
          for (int j = 0; j < K; ++j) acc[j][k] += v[j];
        }
      }
      for (int j = 0; j < K; ++j)
        for (int64_t k = 0; k < blk.width; ++k) total[j][k] += double(acc[j][k]);
    }
    return;
  }
  LaneSums<K> sums;
  for (int64_t n = 0; n < l.batch; ++n) {
    const int64_t start = (n * l.channels + blk.c0) * l.inner;
    sums.add(l.inner, [&](auto at, auto* v) { f(decltype(at){start + at.i}, 0, v); });
  }
  for (int j = 0; j < K; ++j) total[j][0] = sums.total(j);
}

// Calls f(start, k) for every run of `inner` contiguous values (start .. start + inner - 1)
// of channel c0 + k, in memory order.
template <typename F>
inline void block_runs(const ChannelNormLayout& l, Block blk, F f) {
  for (int64_t n = 0; n < l.batch; ++n)
    for (int64_t k = 0; k < blk.width; ++k) f((n * l.channels + blk.c0 + k) * l.inner, k);
}

// The per-channel constants of one block: out = ((x - mean) - mean_rest) * scale + shift,
// scale = rstd * weight.
struct Affine {
  float mean[kBlock], mean_rest[kBlock], scale[kBlock], shift[kBlock];
};

void normalize_block(float* out, const float* x, const Affine& a, const ChannelNormLayout& l, Block blk) {
  if (l.inner == 1) {  // a flat loop across the block's channels, vectorized
    for (int64_t n = 0; n < l.batch; ++n) {
      const float* xr = x + n * l.channels + blk.c0;  // (width)
      float* yr = out + n * l.channels + blk.c0;      // (width)
      for (int64_t k = 0; k < blk.width; ++k) yr[k] = ((xr[k] - a.mean[k]) - a.mean_rest[k]) * a.scale[k] + a.shift[k];
    }
    return;
  }
  block_runs(l, blk, [&](int64_t start, int64_t k) {
    const float m = a.mean[k], rest = a.mean_rest[k], scale = a.scale[k], shift = a.shift[k];
    for (int64_t s = start; s < start + l.inner; ++s) out[s] = ((x[s] - m) - rest) * scale + shift;
  });
}

}  // namespace

void channel_norm_forward_train(float* out, const NormStats& stats, float* var, const float* x, const float* weight,
                                const float* bias, const ChannelNormLayout& l, double eps) {
  const double count = double(l.per_channel());
  if (count == 0) return;
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t b = 0; b < block_count(l); ++b) {
    const Block blk = block_at(l, b);
    // Sums of x - (the channel's first value): exact for values near each other, so a mean
    // of 1e4 against a spread of 1e-1 keeps its digits in float sums.
    float first[kBlock];  // (width)
    for (int64_t k = 0; k < blk.width; ++k) first[k] = x[(blk.c0 + k) * l.inner];
    double sums[1][kBlock], squares[1][kBlock];  // (width) each
    block_sums(l, blk, sums, [&](auto at, int64_t k, auto* v) { v[0] = at(x) - first[k]; });
    Affine a;
    for (int64_t k = 0; k < blk.width; ++k) {
      const Moments m = Moments::around(double(first[k]) + sums[0][k] / count);
      a.mean[k] = m.mean;
      a.mean_rest[k] = m.mean_rest;
    }
    block_sums(l, blk, squares, [&](auto at, int64_t k, auto* v) {  // two passes: never E[x^2] - E[x]^2
      const auto d = (at(x) - a.mean[k]) - a.mean_rest[k];
      v[0] = d * d;
    });
    for (int64_t k = 0; k < blk.width; ++k) {
      const int64_t c = blk.c0 + k;
      Moments m;
      m.mean = a.mean[k];
      m.mean_rest = a.mean_rest[k];
      m.set_variance(squares[0][k] / count, eps);
      m.store(stats, c);
      if (var) var[c] = float(squares[0][k] / count);
      a.scale[k] = m.rstd * (weight ? weight[c] : 1.0f);
      a.shift[k] = bias ? bias[c] : 0.0f;
    }
    normalize_block(out, x, a, l, blk);
  }
}

void channel_norm_forward(float* out, const float* x, const NormStats& stats, const float* weight, const float* bias,
                          const ChannelNormLayout& l) {
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t b = 0; b < block_count(l); ++b) {
    const Block blk = block_at(l, b);
    Affine a;
    for (int64_t k = 0; k < blk.width; ++k) {
      const int64_t c = blk.c0 + k;
      const Moments m = Moments::load(stats, c);
      a.mean[k] = m.mean;
      a.mean_rest[k] = m.mean_rest;
      a.scale[k] = m.rstd * (weight ? weight[c] : 1.0f);
      a.shift[k] = bias ? bias[c] : 0.0f;
    }
    normalize_block(out, x, a, l, blk);
  }
}

// With xhat = (x - mean) * rstd over the n values of a channel (batch statistics):
//   dx = weight * rstd * (dy - mean(dy) - xhat * mean(dy * xhat))
// and the two sums are also dbias and dweight. With fixed statistics dx = weight * rstd * dy.
// One pass for both sums, one for dx.
void channel_norm_backward(float* dx, float* dweight, float* dbias, const float* dy, const float* x,
                           const NormStats& stats, const float* weight, const ChannelNormLayout& l,
                           bool batch_stats) {
  const double count = double(l.per_channel());
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t b = 0; b < block_count(l); ++b) {
    const Block blk = block_at(l, b);
    Affine a;  // shift: unused
    float rs[kBlock], mean_dy[kBlock], mean_dy_xhat[kBlock];  // (width) each
    for (int64_t k = 0; k < blk.width; ++k) {
      const int64_t c = blk.c0 + k;
      const Moments m = Moments::load(stats, c);
      a.mean[k] = m.mean;
      a.mean_rest[k] = m.mean_rest;
      rs[k] = m.rstd;
      a.scale[k] = (weight ? weight[c] : 1.0f) * m.rstd;
      mean_dy[k] = mean_dy_xhat[k] = 0.0f;
    }
    if (batch_stats || dweight || dbias) {
      double sums[2][kBlock];  // (2, width): dy, dy * xhat
      block_sums(l, blk, sums, [&](auto at, int64_t k, auto* v) {
        v[0] = at(dy);
        v[1] = at(dy) * (((at(x) - a.mean[k]) - a.mean_rest[k]) * rs[k]);
      });
      for (int64_t k = 0; k < blk.width; ++k) {
        const int64_t c = blk.c0 + k;
        if (dweight) dweight[c] = float(sums[1][k]);
        if (dbias) dbias[c] = float(sums[0][k]);
        if (batch_stats) {
          mean_dy[k] = float(sums[0][k] / count);
          mean_dy_xhat[k] = float(sums[1][k] / count);
        }
      }
    }
    if (!dx) continue;
    if (l.inner == 1) {  // a flat loop across the block's channels, vectorized
      for (int64_t n = 0; n < l.batch; ++n) {
        const int64_t row = n * l.channels + blk.c0;
        const float* xr = x + row;  // (width)
        const float* dyr = dy + row;
        float* dxr = dx + row;
        for (int64_t k = 0; k < blk.width; ++k)
          dxr[k] = a.scale[k] *
                   (dyr[k] - mean_dy[k] - ((xr[k] - a.mean[k]) - a.mean_rest[k]) * rs[k] * mean_dy_xhat[k]);
      }
      continue;
    }
    block_runs(l, blk, [&](int64_t start, int64_t k) {
      const float m = a.mean[k], rest = a.mean_rest[k], r = rs[k], scale = a.scale[k];
      const float mdy = mean_dy[k], mdyx = mean_dy_xhat[k];
      for (int64_t s = start; s < start + l.inner; ++s)
        dx[s] = scale * (dy[s] - mdy - ((x[s] - m) - rest) * r * mdyx);
    });
  }
}

}  // namespace minidl::kernels
