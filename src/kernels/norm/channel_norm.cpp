#include "kernels/norm/channel_norm.hpp"

#include <algorithm>
#include <type_traits>

#include "kernels/broadcast.hpp"
#include "kernels/parallel_for.hpp"
#include "lane_sum.hpp"
#include "scratch.hpp"

namespace minidl::kernels {
namespace {

// The batch goes in chunks of whole batch items, each summed on its own (per channel, from
// data still in cache after its first read) and the chunks merged in order in double: x
// and dy stream from memory once per sweep, in memory order, and chunks run on any number
// of threads with the same bits. A chunk holds about kChunkValues values (it stays in L2),
// and at most kLaneRun items, so an (N, C) chunk's float sums stay short.
constexpr int64_t kChunkValues = int64_t(1) << 15;

struct Chunks {
  int64_t items, count;  // batch items per chunk, chunks
  Chunks(const ChannelNormLayout& l)
      : items(std::clamp<int64_t>(kChunkValues / std::max<int64_t>(1, l.channels * l.inner), 1, kLaneRun)),
        count((l.batch + items - 1) / items) {}
  int64_t begin(int64_t chunk) const { return chunk * items; }
  int64_t end(int64_t chunk, const ChannelNormLayout& l) const { return std::min(l.batch, (chunk + 1) * items); }
};

// Loops over batch items, or over chunks of them, go parallel past kParallelElements values.
int64_t item_grain(const ChannelNormLayout& l) { return grain_for(l.channels * l.inner); }
int64_t chunk_grain(const Chunks& chunks, const ChannelNormLayout& l) {
  return grain_for(chunks.items * l.channels * l.inner);
}

// An (N, C) chunk's per-channel sums go kChannelBlock channels at a time, the block's
// running sums in registers over the chunk's rows: a loop across all C channels per row
// stores and reloads every sum each row (a store-to-load wait per row). Per channel the
// rows are still added in order: the same bits. f(width, c0) sums channels [c0, c0 +
// width); width is a compile-time kChannelBlock for the full blocks.
constexpr int64_t kChannelBlock = 16;

// Blocks only for (N, C) rows of at most 256 channels (1 KB): a block steps through memory
// by a row, and past that stride the hardware prefetchers lose the streams (docs/benchmarks.md,
// "What makes it fast"). Wider rows keep 16 independent vectors per row
// across the channels, which hides the wait for each sum anyway.
constexpr int64_t kBlockedChannels = 256;
inline bool blocked(const ChannelNormLayout& l) { return l.inner == 1 && l.channels <= kBlockedChannels; }

template <typename F>
inline void for_channel_blocks(int64_t channels, F f) {
  int64_t c0 = 0;
  for (; c0 + kChannelBlock <= channels; c0 += kChannelBlock) f(std::integral_constant<int64_t, kChannelBlock>{}, c0);
  if (c0 < channels) f(channels - c0, c0);
}

// Per channel c over the items [n0, n1): mean[c], the mean of x - first[c], and m2[c], the
// sum of squares of (x - first[c]) - mean[c]. Two passes over the chunk (the second from
// cache): never E[x^2] - E[x]^2. x - first[c] is exact for values near each other, so a
// mean of 1e4 against a spread of 1e-1 keeps its digits in float sums.
void chunk_moments(float* mean, float* m2, const float* x, const float* first, const ChannelNormLayout& l, int64_t n0,
                   int64_t n1) {
  const int64_t c_count = l.channels;
  const float inv_count = 1.0f / float((n1 - n0) * l.inner);
  if (blocked(l)) {
    for_channel_blocks(c_count, [&](auto width, int64_t c0) {
      float f[kChannelBlock] = {}, s[kChannelBlock] = {}, q[kChannelBlock] = {};  // (width)
      std::copy_n(first + c0, width, f);
      for (int64_t n = n0; n < n1; ++n) {
        const float* xr = x + n * c_count + c0;
        for (int64_t k = 0; k < width; ++k) s[k] += xr[k] - f[k];
      }
      for (int64_t k = 0; k < width; ++k) s[k] *= inv_count;
      for (int64_t n = n0; n < n1; ++n) {
        const float* xr = x + n * c_count + c0;
        for (int64_t k = 0; k < width; ++k) {
          const float d = (xr[k] - f[k]) - s[k];
          q[k] += d * d;
        }
      }
      std::copy_n(s, width, mean + c0);
      std::copy_n(q, width, m2 + c0);
    });
    return;
  }
  if (l.inner == 1) {  // loops across channels, vectorized
    std::fill(mean, mean + c_count, 0.0f);
    std::fill(m2, m2 + c_count, 0.0f);
    for (int64_t n = n0; n < n1; ++n)
#pragma omp simd  // channels are independent: no runtime overlap checks per row
      for (int64_t c = 0; c < c_count; ++c) mean[c] += x[n * c_count + c] - first[c];
    for (int64_t c = 0; c < c_count; ++c) mean[c] *= inv_count;
    for (int64_t n = n0; n < n1; ++n)
#pragma omp simd
      for (int64_t c = 0; c < c_count; ++c) {
        const float d = (x[n * c_count + c] - first[c]) - mean[c];
        m2[c] += d * d;
      }
    return;
  }
  for (int64_t c = 0; c < c_count; ++c) {  // runs of `inner` values
    const float f = first[c];
    LaneSums<1> sums, squares;
    for (int64_t n = n0; n < n1; ++n) {
      const float* run = x + (n * c_count + c) * l.inner;
      sums.add(l.inner, [&](auto at, auto* v) { v[0] = at(run) - f; });
    }
    const float m = float(sums.total(0)) * inv_count;
    for (int64_t n = n0; n < n1; ++n) {
      const float* run = x + (n * c_count + c) * l.inner;
      squares.add(l.inner, [&](auto at, auto* v) {
        const auto d = (at(run) - f) - m;
        v[0] = d * d;
      });
    }
    mean[c] = m;
    m2[c] = float(squares.total(0));
  }
}

// Per channel over the items [n0, n1): sums[c] = sum(dy), sums[C + c] = sum(dy * xhat) with
// xhat = ((x - mean) - mean_rest) * rstd.
void chunk_grad_sums(float* sums, const float* dy, const float* x, const NormStats& s, const ChannelNormLayout& l,
                     int64_t n0, int64_t n1) {
  const int64_t c_count = l.channels;
  float* sum_dy = sums;                 // (C)
  float* sum_dy_xhat = sums + c_count;  // (C)
  if (blocked(l)) {
    for_channel_blocks(c_count, [&](auto width, int64_t c0) {
      float mean[kChannelBlock] = {}, rest[kChannelBlock] = {}, rstd[kChannelBlock] = {};  // (width)
      float a[kChannelBlock] = {}, b[kChannelBlock] = {};  // (width) sum(dy), sum(dy * xhat)
      std::copy_n(s.mean + c0, width, mean);
      std::copy_n(s.mean_rest + c0, width, rest);
      std::copy_n(s.rstd + c0, width, rstd);
      for (int64_t n = n0; n < n1; ++n) {
        const float* xr = x + n * c_count + c0;
        const float* dyr = dy + n * c_count + c0;
        for (int64_t k = 0; k < width; ++k) {
          a[k] += dyr[k];
          b[k] += dyr[k] * (((xr[k] - mean[k]) - rest[k]) * rstd[k]);
        }
      }
      std::copy_n(a, width, sum_dy + c0);
      std::copy_n(b, width, sum_dy_xhat + c0);
    });
    return;
  }
  if (l.inner == 1) {
    std::fill(sums, sums + 2 * c_count, 0.0f);
    const float* mean = s.mean;  // (C) each
    const float* rest = s.mean_rest;
    const float* rstd = s.rstd;
    for (int64_t n = n0; n < n1; ++n) {
      const float* xr = x + n * c_count;
      const float* dyr = dy + n * c_count;
#pragma omp simd
      for (int64_t c = 0; c < c_count; ++c) {
        sum_dy[c] += dyr[c];
        sum_dy_xhat[c] += dyr[c] * (((xr[c] - mean[c]) - rest[c]) * rstd[c]);
      }
    }
    return;
  }
  for (int64_t c = 0; c < c_count; ++c) {
    const float m = s.mean[c], rest = s.mean_rest[c], rs = s.rstd[c];
    LaneSums<2> lanes;
    for (int64_t n = n0; n < n1; ++n) {
      const int64_t start = (n * c_count + c) * l.inner;
      const float* xc = x + start;
      const float* dyc = dy + start;
      lanes.add(l.inner, [&](auto at, auto* v) {
        v[0] = at(dyc);
        v[1] = at(dyc) * (((at(xc) - m) - rest) * rs);
      });
    }
    sum_dy[c] = float(lanes.total(0));
    sum_dy_xhat[c] = float(lanes.total(1));
  }
}

// out = ((x - mean[c]) - rest[c]) * scale[c] + shift[c] over every value; with dy given,
// the backward's dx = scale[c] * (dy - mean_dy[c] - xhat * mean_dy_xhat[c]) instead.
struct Constants {
  const float* mean;
  const float* rest;
  const float* rstd;
  const float* scale;         // rstd * weight
  const float* shift;         // forward: bias; backward: mean(dy)
  const float* mean_dy_xhat;  // backward only
};

// (N, C): chunks of items (parallel), and in each the channels in blocks, so a block's
// constants stay in registers over the chunk's rows instead of being loaded with every value.
template <typename F>
void for_chunk_blocks(const ChannelNormLayout& l, F f) {
  const Chunks chunks(l);
  parallel_for(chunks.count, chunk_grain(chunks, l), [&](int64_t chunk) {
    const int64_t n0 = chunks.begin(chunk), n1 = chunks.end(chunk, l);
    for_channel_blocks(l.channels, [&](auto width, int64_t c0) { f(width, c0, n0, n1); });
  });
}

void normalize(float* out, const float* x, const Constants& k, const ChannelNormLayout& l) {
  const int64_t c_count = l.channels;
  if (blocked(l)) {
    for_chunk_blocks(l, [&](auto width, int64_t c0, int64_t n0, int64_t n1) {
      float m[kChannelBlock] = {}, rest[kChannelBlock] = {}, scale[kChannelBlock] = {}, shift[kChannelBlock] = {};
      std::copy_n(k.mean + c0, width, m);
      std::copy_n(k.rest + c0, width, rest);
      std::copy_n(k.scale + c0, width, scale);
      std::copy_n(k.shift + c0, width, shift);
      for (int64_t n = n0; n < n1; ++n) {
        const float* xr = x + n * c_count + c0;
        float* yr = out + n * c_count + c0;
#pragma omp simd
        for (int64_t j = 0; j < width; ++j) yr[j] = ((xr[j] - m[j]) - rest[j]) * scale[j] + shift[j];
      }
    });
    return;
  }
  parallel_for(l.batch, item_grain(l), [&](int64_t n) {
    const float* xn = x + n * c_count * l.inner;
    float* yn = out + n * c_count * l.inner;
    if (l.inner == 1) {
#pragma omp simd
      for (int64_t c = 0; c < c_count; ++c) yn[c] = ((xn[c] - k.mean[c]) - k.rest[c]) * k.scale[c] + k.shift[c];
      return;
    }
    for (int64_t c = 0; c < c_count; ++c) {
      const float m = k.mean[c], rest = k.rest[c], scale = k.scale[c], shift = k.shift[c];
      const float* xc = xn + c * l.inner;
      float* yc = yn + c * l.inner;
      for (int64_t s = 0; s < l.inner; ++s) yc[s] = ((xc[s] - m) - rest) * scale + shift;
    }
  });
}

void input_grad(float* dx, const float* dy, const float* x, const Constants& k, const ChannelNormLayout& l) {
  const int64_t c_count = l.channels;
  if (blocked(l)) {
    for_chunk_blocks(l, [&](auto width, int64_t c0, int64_t n0, int64_t n1) {
      float m[kChannelBlock] = {}, rest[kChannelBlock] = {}, rs[kChannelBlock] = {};
      float scale[kChannelBlock] = {}, mdy[kChannelBlock] = {}, mdyx[kChannelBlock] = {};
      std::copy_n(k.mean + c0, width, m);
      std::copy_n(k.rest + c0, width, rest);
      std::copy_n(k.rstd + c0, width, rs);
      std::copy_n(k.scale + c0, width, scale);
      std::copy_n(k.shift + c0, width, mdy);
      std::copy_n(k.mean_dy_xhat + c0, width, mdyx);
      for (int64_t n = n0; n < n1; ++n) {
        const int64_t offset = n * c_count + c0;
        const float* xr = x + offset;
        const float* dyr = dy + offset;
        float* dxr = dx + offset;
#pragma omp simd
        for (int64_t j = 0; j < width; ++j)
          dxr[j] = scale[j] * (dyr[j] - mdy[j] - ((xr[j] - m[j]) - rest[j]) * rs[j] * mdyx[j]);
      }
    });
    return;
  }
  parallel_for(l.batch, item_grain(l), [&](int64_t n) {
    const int64_t offset = n * c_count * l.inner;
    const float* xn = x + offset;
    const float* dyn = dy + offset;
    float* dxn = dx + offset;
    if (l.inner == 1) {
#pragma omp simd
      for (int64_t c = 0; c < c_count; ++c)
        dxn[c] = k.scale[c] * (dyn[c] - k.shift[c] - ((xn[c] - k.mean[c]) - k.rest[c]) * k.rstd[c] * k.mean_dy_xhat[c]);
      return;
    }
    for (int64_t c = 0; c < c_count; ++c) {
      const float m = k.mean[c], rest = k.rest[c], rs = k.rstd[c], scale = k.scale[c];
      const float mdy = k.shift[c], mdyx = k.mean_dy_xhat[c];
      const float* xc = xn + c * l.inner;
      const float* dyc = dyn + c * l.inner;
      float* dxc = dxn + c * l.inner;
      for (int64_t s = 0; s < l.inner; ++s) dxc[s] = scale * (dyc[s] - mdy - ((xc[s] - m) - rest) * rs * mdyx);
    }
  });
}

}  // namespace

void channel_norm_forward_train(float* out, const NormStats& stats, float* var, const float* x, const float* weight,
                                const float* bias, const ChannelNormLayout& l, double eps) {
  const int64_t c_count = l.channels;
  const double count = double(l.per_channel());
  if (count == 0) return;
  const Chunks chunks(l);
  // (chunks, 2, C): each chunk's mean and m2, then (4, C): first, scale, shift, spare
  float* partials = norm_scratch(size_t((chunks.count * 2 + 4) * c_count));
  float* first = partials + chunks.count * 2 * c_count;  // (C) each channel's first value
  float* scale = first + c_count;                        // (C)
  float* shift = scale + c_count;                        // (C)
  for (int64_t c = 0; c < c_count; ++c) first[c] = x[c * l.inner];
  parallel_for(chunks.count, chunk_grain(chunks, l), [&](int64_t chunk) {
    float* p = partials + chunk * 2 * c_count;
    chunk_moments(p, p + c_count, x, first, l, chunks.begin(chunk), chunks.end(chunk, l));
  });
  // Chunks merged in order (Chan et al.: counts, means and sums of squared deviations),
  // channels in blocks so the loop across them vectorizes.
  constexpr int64_t kBlock = 256;
  for (int64_t c0 = 0; c0 < c_count; c0 += kBlock) {
    const int64_t width = std::min(kBlock, c_count - c0);
    double mean_a[kBlock], m2_a[kBlock];  // (width); only width cleared: 64 channels clear 1 KB, not 4
    std::fill_n(mean_a, width, 0.0);
    std::fill_n(m2_a, width, 0.0);
    double n_a = 0.0;
    for (int64_t chunk = 0; chunk < chunks.count; ++chunk) {
      const float* mean_b = partials + chunk * 2 * c_count + c0;  // (width)
      const float* m2_b = mean_b + c_count;                       // (width)
      const double n_b = double((chunks.end(chunk, l) - chunks.begin(chunk)) * l.inner), n = n_a + n_b;
      const double to_b = n_b / n, cross = n_a * n_b / n;
      for (int64_t k = 0; k < width; ++k) {
        const double delta = double(mean_b[k]) - mean_a[k];
        mean_a[k] += delta * to_b;
        m2_a[k] += double(m2_b[k]) + delta * delta * cross;
      }
      n_a = n;
    }
    for (int64_t k = 0; k < width; ++k) {
      const int64_t c = c0 + k;
      Moments m = Moments::around(double(first[c]) + mean_a[k]);
      m.set_variance(m2_a[k] / count, eps);
      m.store(stats, c);
      if (var) var[c] = float(m2_a[k] / count);
      scale[c] = m.rstd * (weight ? weight[c] : 1.0f);
      shift[c] = bias ? bias[c] : 0.0f;
    }
  }
  normalize(out, x, {stats.mean, stats.mean_rest, stats.rstd, scale, shift, nullptr}, l);
}

void channel_norm_forward(float* out, const float* x, const NormStats& stats, const float* weight, const float* bias,
                          const ChannelNormLayout& l) {
  const int64_t c_count = l.channels;
  float* rest = norm_scratch(size_t(3 * c_count));  // (3, C): mean_rest, scale, shift
  float* scale = rest + c_count;
  float* shift = scale + c_count;
  for (int64_t c = 0; c < c_count; ++c) {
    const Moments m = Moments::load(stats, c);
    rest[c] = m.mean_rest;
    scale[c] = m.rstd * (weight ? weight[c] : 1.0f);
    shift[c] = bias ? bias[c] : 0.0f;
  }
  normalize(out, x, {stats.mean, rest, stats.rstd, scale, shift, nullptr}, l);
}

// With xhat = (x - mean) * rstd over the n values of a channel (batch statistics):
//   dx = weight * rstd * (dy - mean(dy) - xhat * mean(dy * xhat))
// and the two sums are also dbias and dweight. With fixed statistics dx = weight * rstd * dy.
// One sweep for both sums, one for dx.
void channel_norm_backward(float* dx, float* dweight, float* dbias, const float* dy, const float* x,
                           const NormStats& stats, const float* weight, const ChannelNormLayout& l, bool batch_stats) {
  const int64_t c_count = l.channels;
  const double count = double(l.per_channel());
  const Chunks chunks(l);
  // (chunks, 2, C): each chunk's sum(dy) and sum(dy * xhat), then (4, C): mean_rest,
  // scale, mean(dy), mean(dy * xhat)
  float* partials = norm_scratch(size_t((chunks.count * 2 + 4) * c_count));
  float* rest = partials + chunks.count * 2 * c_count;
  float* scale = rest + c_count;
  float* mean_dy = scale + c_count;
  float* mean_dy_xhat = mean_dy + c_count;
  for (int64_t c = 0; c < c_count; ++c) {
    const Moments m = Moments::load(stats, c);
    rest[c] = m.mean_rest;
    scale[c] = (weight ? weight[c] : 1.0f) * m.rstd;
    mean_dy[c] = mean_dy_xhat[c] = 0.0f;
  }
  const NormStats s{stats.mean, rest, stats.rstd};
  if (batch_stats || dweight || dbias) {
    parallel_for(chunks.count, chunk_grain(chunks, l), [&](int64_t chunk) {
      chunk_grad_sums(partials + chunk * 2 * c_count, dy, x, s, l, chunks.begin(chunk), chunks.end(chunk, l));
    });
    sum_chunk_partials(partials, chunks.count, c_count, [&](int64_t c, double sum_dy, double sum_dy_xhat) {
      if (dweight) dweight[c] = float(sum_dy_xhat);
      if (dbias) dbias[c] = float(sum_dy);
      if (batch_stats) {
        mean_dy[c] = float(sum_dy / count);
        mean_dy_xhat[c] = float(sum_dy_xhat / count);
      }
    });
  }
  if (dx) input_grad(dx, dy, x, {stats.mean, rest, stats.rstd, scale, mean_dy, mean_dy_xhat}, l);
}

}  // namespace minidl::kernels
