#include "minidl/kernels/norm/row_norm.hpp"

#include <algorithm>
#include <vector>

#include "minidl/kernels/broadcast.hpp"
#include "minidl/kernels/norm/lane_sum.hpp"

namespace minidl::kernels {
namespace {

bool run_parallel(const RowNormLayout& l) { return l.rows > 1 && l.rows * l.cols() > kParallelElements; }

// Calls f(w, b) with w(at) = at(weight) or 1 and b(at) = at(bias) or 0 (`at`: a load, see
// lane_sum.hpp): one instantiation per combination, so the loops inside carry no branch
// per value. weight and bias point at the row's first affine entry.
template <typename F>
inline void with_affine(const float* weight, const float* bias, F f) {
  auto w = [weight](auto at) { return at(weight); };
  auto b = [bias](auto at) { return at(bias); };
  auto one = [](auto) { return 1.0f; };
  auto zero = [](auto) { return 0.0f; };
  if (weight && bias) f(w, b);
  else if (weight) f(w, zero);
  else if (bias) f(one, b);
  else f(one, zero);
}

// Mean (0 when uncentered) and rstd of one row, two passes (never E[x^2] - E[x]^2). The
// first sums x - x[0]: exact for values near each other, so a mean of 1e4 against a
// spread of 1e-1 keeps its digits in float sums.
Moments row_moments(const float* xr, int64_t n, bool centered, double eps) {
  Moments m;
  if (centered && n > 0) {
    const float shift = xr[0];
    m = Moments::around(double(shift) + lane_sum(n, [&](auto at) { return at(xr) - shift; }) / double(n));
  }
  const float mean = m.mean, rest = m.mean_rest;
  m.set_variance(lane_sum(n,
                          [&](auto at) {
                            const auto d = (at(xr) - mean) - rest;
                            return d * d;
                          }) / double(n),
                 eps);
  return m;
}

// yr = ((x - mean) - mean_rest) * rstd * weight + bias for one row; weight and bias (or
// null) at the row's first affine entry.
void normalize_row(float* yr, const float* xr, Moments m, const float* weight, const float* bias,
                   const RowNormLayout& l) {
  const float mean = m.mean, rest = m.mean_rest, rs = m.rstd;
  with_affine(weight, bias, [&](auto w, auto b) {
    if (l.inner == 1) {  // LayerNorm, RMSNorm: one flat loop
      for (int64_t i = 0; i < l.channels; ++i) yr[i] = ((xr[i] - mean) - rest) * rs * w(ScalarAt{i}) + b(ScalarAt{i});
      return;
    }
    for (int64_t c = 0; c < l.channels; ++c) {
      const float wc = w(ScalarAt{c}), bc = b(ScalarAt{c});
      const float* xc = xr + c * l.inner;
      float* yc = yr + c * l.inner;
      for (int64_t s = 0; s < l.inner; ++s) yc[s] = ((xc[s] - mean) - rest) * rs * wc + bc;
    }
  });
}

// Rows go in chunks of kChunkItems batch items (`groups` rows each); a chunk sums its own
// weight and bias gradients (float, at most kChunkItems terms each), then the chunks are
// added in order in double: the same bits whatever the thread count, no second sweep of
// x and dy for the parameter gradients.
constexpr int64_t kChunkItems = 32;

// The partial sums of one backward: reused per thread across calls (no allocation per call).
float* scratch(size_t n) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

// One row's backward. With xhat = (x - mean) * rstd and g = dy * weight over the row's n values:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))   (uncentered: no mean(g) term)
// and dw[a] += dy * xhat, db[a] += dy into the chunk's partials (either may be null).
// weight, dw and db point at the row's first affine entry.
void row_backward(float* dxr, float* dw, float* db, const float* dyr, const float* xr, Moments m,
                  const float* weight, const RowNormLayout& l) {
  const float mean = m.mean, rest = m.mean_rest, rs = m.rstd;
  const double n = double(l.cols());
  with_affine(weight, nullptr, [&](auto w, auto) {
    if (l.inner == 1) {  // LayerNorm, RMSNorm
      if (dxr) {
        LaneSums<2> sums;
        sums.add(l.channels, [&](auto at, auto* v) {
          const auto g = at(dyr) * w(at);
          v[0] = g;
          v[1] = g * (((at(xr) - mean) - rest) * rs);
        });
        const float mean_g = l.centered ? float(sums.total(0) / n) : 0.0f;
        const float mean_gx = float(sums.total(1) / n);
        for (int64_t i = 0; i < l.channels; ++i)
          dxr[i] = rs * (dyr[i] * w(ScalarAt{i}) - mean_g - ((xr[i] - mean) - rest) * rs * mean_gx);
      }
      if (dw)
        for (int64_t i = 0; i < l.channels; ++i) {
          dw[i] += dyr[i] * (((xr[i] - mean) - rest) * rs);
          db[i] += dyr[i];
        }
      return;
    }
    // GroupNorm: per channel, sum(dy) and sum(dy * xhat) are the parameter gradients'
    // terms, and weighted by the channel's weight they make the row's two sums.
    double sum_g = 0.0, sum_gx = 0.0;
    for (int64_t c = 0; c < l.channels; ++c) {
      const float* xc = xr + c * l.inner;
      const float* dyc = dyr + c * l.inner;
      LaneSums<2> sums;
      sums.add(l.inner, [&](auto at, auto* v) {
        v[0] = at(dyc);
        v[1] = at(dyc) * (((at(xc) - mean) - rest) * rs);
      });
      const double sum_dy = sums.total(0), sum_dy_xhat = sums.total(1);
      sum_g += double(w(ScalarAt{c})) * sum_dy;
      sum_gx += double(w(ScalarAt{c})) * sum_dy_xhat;
      if (dw) {
        dw[c] += float(sum_dy_xhat);
        db[c] += float(sum_dy);
      }
    }
    if (!dxr) return;
    const float mean_g = l.centered ? float(sum_g / n) : 0.0f;
    const float mean_gx = float(sum_gx / n);
    for (int64_t c = 0; c < l.channels; ++c) {
      const float wc = w(ScalarAt{c});
      const float* xc = xr + c * l.inner;
      const float* dyc = dyr + c * l.inner;
      float* dxc = dxr + c * l.inner;
      for (int64_t s = 0; s < l.inner; ++s)
        dxc[s] = rs * (dyc[s] * wc - mean_g - ((xc[s] - mean) - rest) * rs * mean_gx);
    }
  });
}

// dweight and dbias (entries) from the chunks' partials (chunks, 2, entries), chunks
// added in order in double.
void sum_partials(float* dweight, float* dbias, const float* partials, int64_t chunks, int64_t entries) {
  constexpr int64_t kBlock = 256;
  for (int64_t e0 = 0; e0 < entries; e0 += kBlock) {
    const int64_t width = std::min(kBlock, entries - e0);
    double dw[kBlock] = {}, db[kBlock] = {};  // (width)
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      const float* pw = partials + chunk * 2 * entries + e0;
      const float* pb = pw + entries;
      for (int64_t k = 0; k < width; ++k) {
        dw[k] += double(pw[k]);
        db[k] += double(pb[k]);
      }
    }
    for (int64_t k = 0; k < width; ++k) {
      if (dweight) dweight[e0 + k] = float(dw[k]);
      if (dbias) dbias[e0 + k] = float(db[k]);
    }
  }
}

}  // namespace

void row_norm_forward(float* out, const NormStats& stats, const float* x, const float* weight, const float* bias,
                      const RowNormLayout& l, double eps) {
  const int64_t cols = l.cols();
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t r = 0; r < l.rows; ++r) {
    const float* xr = x + r * cols;  // (cols)
    const Moments m = row_moments(xr, cols, l.centered, eps);
    m.store(stats, r);
    const int64_t a0 = (r % l.groups) * l.channels;  // the row's first affine entry
    normalize_row(out + r * cols, xr, m, weight ? weight + a0 : nullptr, bias ? bias + a0 : nullptr, l);
  }
}

void row_norm_backward(float* dx, float* dweight, float* dbias, const float* dy, const float* x,
                       const NormStats& stats, const float* weight, const RowNormLayout& l) {
  const int64_t cols = l.cols(), entries = l.groups * l.channels;
  const int64_t chunk_rows = kChunkItems * l.groups;
  const int64_t chunks = (l.rows + chunk_rows - 1) / chunk_rows;
  const bool affine = dweight || dbias;
  float* partials = affine ? scratch(size_t(chunks * 2 * entries)) : nullptr;  // (chunks, 2, entries)
#pragma omp parallel for if (run_parallel(l) && chunks > 1) schedule(static)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    float* dw = affine ? partials + chunk * 2 * entries : nullptr;  // (entries)
    float* db = affine ? dw + entries : nullptr;                    // (entries)
    if (affine) std::fill(dw, dw + 2 * entries, 0.0f);
    const int64_t r1 = std::min(l.rows, (chunk + 1) * chunk_rows);
    for (int64_t r = chunk * chunk_rows; r < r1; ++r) {
      const int64_t a0 = (r % l.groups) * l.channels;  // the row's first affine entry
      row_backward(dx ? dx + r * cols : nullptr, affine ? dw + a0 : nullptr, affine ? db + a0 : nullptr,
                   dy + r * cols, x + r * cols, Moments::load(stats, r), weight ? weight + a0 : nullptr, l);
    }
  }
  if (affine) sum_partials(dweight, dbias, partials, chunks, entries);
}

}  // namespace minidl::kernels
