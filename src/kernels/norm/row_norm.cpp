#include "minidl/kernels/norm/row_norm.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "minidl/kernels/broadcast.hpp"
#include "minidl/kernels/norm/lane_sum.hpp"

namespace minidl::kernels {
namespace {

// Calls f(i, a) for every value i of one row and its affine entry a, where a0 is the
// row's first affine entry. LayerNorm (inner == 1) gets a flat loop the compiler vectorizes.
template <typename F>
inline void for_each_value(const RowNormLayout& l, int64_t a0, F f) {
  if (l.inner == 1) {
    for (int64_t i = 0; i < l.channels; ++i) f(i, a0 + i);
    return;
  }
  for (int64_t c = 0; c < l.channels; ++c)
    for (int64_t s = 0; s < l.inner; ++s) f(c * l.inner + s, a0 + c);
}

bool run_parallel(const RowNormLayout& l) { return l.rows > 1 && l.rows * l.cols() > kParallelElements; }

// Sum over one row of f(i, a) (value index, affine entry), deterministic (lane_sum).
template <typename F>
inline double row_sum(const RowNormLayout& l, int64_t a0, F f) {
  if (l.inner == 1) return lane_sum(l.channels, [&](int64_t i) { return f(i, a0 + i); });
  double total = 0.0;
  for (int64_t c = 0; c < l.channels; ++c)
    total += lane_sum(l.inner, [&](int64_t s) { return f(c * l.inner + s, a0 + c); });
  return total;
}

// Mean (0 when uncentered) and 1 / sqrt(var + eps) of one row: two passes in double, so
// a large mean against a small spread loses nothing (never E[x^2] - E[x]^2).
void row_moments(const float* xr, int64_t n, bool centered, double eps, double& mean, float& rstd) {
  const double m = centered ? lane_sum(n, [&](int64_t i) { return xr[i]; }) / double(n) : 0.0;
  const double squares = lane_sum(n, [&](int64_t i) {
    const double d = double(xr[i]) - m;
    return d * d;
  });
  mean = m;
  rstd = float(1.0 / std::sqrt(squares / double(n) + eps));
}

// dweight[a] = sum of dy * xhat and dbias[a] = sum of dy over the rows and positions that
// use entry a. Parallel over chunks of entries; each chunk sweeps the rows in order (memory
// order, which the prefetcher follows) and sums every entry in row order: the same bits
// whatever the thread count.
void affine_backward(float* dweight, float* dbias, const float* dy, const float* x, const float* mean,
                     const float* rstd, const float* offset, const RowNormLayout& l) {
  constexpr int64_t kChunk = 512;
  const int64_t entries = l.groups * l.channels;
  const int64_t chunks = (entries + kChunk - 1) / kChunk;
  const int64_t cols = l.cols();
#pragma omp parallel for if (run_parallel(l) && chunks > 1) schedule(static)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const int64_t e0 = chunk * kChunk, e1 = std::min(entries, e0 + kChunk);
    double dw[kChunk] = {}, db[kChunk] = {};  // (e1 - e0)
    for (int64_t r = 0; r < l.rows; ++r) {
      const int64_t a0 = (r % l.groups) * l.channels;  // the row's entries: a0 .. a0 + channels - 1
      const int64_t lo = std::max(a0, e0), hi = std::min(a0 + l.channels, e1);
      if (lo >= hi) continue;
      const float* xr = x + r * cols + (lo - a0) * l.inner;
      const float* dyr = dy + r * cols + (lo - a0) * l.inner;
      const float m = l.centered ? mean[r] : 0.0f;
      const float rs = rstd[r], off = l.centered ? offset[r] : 0.0f;
      double* dwr = dw + (lo - e0);
      double* dbr = db + (lo - e0);
      if (l.inner == 1) {  // LayerNorm, RMSNorm: a flat loop the compiler vectorizes
        for (int64_t c = 0; c < hi - lo; ++c) {
          dwr[c] += double(dyr[c]) * double((xr[c] - m) * rs - off);
          dbr[c] += double(dyr[c]);
        }
        continue;
      }
      for (int64_t c = 0; c < hi - lo; ++c) {
        const float* xc = xr + c * l.inner;
        const float* dyc = dyr + c * l.inner;
        dwr[c] += lane_sum(l.inner, [&](int64_t s) { return double(dyc[s]) * double((xc[s] - m) * rs - off); });
        dbr[c] += lane_sum(l.inner, [&](int64_t s) { return dyc[s]; });
      }
    }
    for (int64_t e = e0; e < e1; ++e) {
      if (dweight) dweight[e] = float(dw[e - e0]);
      if (dbias) dbias[e] = float(db[e - e0]);
    }
  }
}

}  // namespace

void row_norm_forward(float* out, float* mean, float* rstd, const float* x, const float* weight,
                      const float* bias, const RowNormLayout& l, double eps) {
  const int64_t cols = l.cols();
#pragma omp parallel for if (run_parallel(l)) schedule(static)
  for (int64_t r = 0; r < l.rows; ++r) {
    const float* xr = x + r * cols;  // (cols)
    float* yr = out + r * cols;      // (cols)
    double m;
    float rs;
    row_moments(xr, cols, l.centered, eps, m, rs);
    // x - m as (x - float(m)) - (m - float(m)): the first difference is exact for x near
    // m, so a mean of 1e4 against a spread of 1e-1 loses nothing to float's rounding of m.
    const float m_float = float(m), m_rest = float(m - double(m_float));
    if (mean) mean[r] = m_float;
    if (rstd) rstd[r] = rs;
    for_each_value(l, (r % l.groups) * l.channels, [&](int64_t i, int64_t a) {
      const float w = weight ? weight[a] : 1.0f;
      const float b = bias ? bias[a] : 0.0f;
      yr[i] = ((xr[i] - m_float) - m_rest) * rs * w + b;
    });
  }
}

// With xhat = (x - mean) * rstd and dxhat = dy * weight, per row of n values:
//   dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
// (uncentered: no mean(dxhat) term). Two reductions, then one pass.
// The saved mean is the true mean rounded to float; with a mean of 1e4 against a spread
// of 1e-1 that rounding shifts every (x - mean) * rstd by up to 5e-3. A centered row's
// xhat sums to 0, so its mean over the row (`offset`) is exactly that shift, removed here.
void row_norm_backward(float* dx, float* dweight, float* dbias, const float* dy, const float* x,
                       const float* mean, const float* rstd, const float* weight, const RowNormLayout& l) {
  const int64_t cols = l.cols();
  std::vector<float> offset(size_t(l.centered ? l.rows : 0));  // (rows)
#pragma omp parallel for if (run_parallel(l) && l.centered) schedule(static)
  for (int64_t r = 0; r < (l.centered ? l.rows : 0); ++r) {
    const float* xr = x + r * cols;
    const float m = mean[r], rs = rstd[r];
    offset[size_t(r)] = float(lane_sum(cols, [&](int64_t i) { return (xr[i] - m) * rs; }) / double(cols));
  }
  if (dx) {
#pragma omp parallel for if (run_parallel(l)) schedule(static)
    for (int64_t r = 0; r < l.rows; ++r) {
      const float* xr = x + r * cols;    // (cols)
      const float* dyr = dy + r * cols;  // (cols)
      float* dxr = dx + r * cols;        // (cols)
      const float m = l.centered ? mean[r] : 0.0f;
      const float rs = rstd[r], off = l.centered ? offset[size_t(r)] : 0.0f;
      const int64_t a0 = (r % l.groups) * l.channels;
      auto dxhat = [&](int64_t i, int64_t a) { return dyr[i] * (weight ? weight[a] : 1.0f); };
      const double sum_g = l.centered ? row_sum(l, a0, dxhat) : 0.0;
      const double sum_gx =
          row_sum(l, a0, [&](int64_t i, int64_t a) { return double(dxhat(i, a)) * double((xr[i] - m) * rs - off); });
      const float mean_g = float(sum_g / double(cols));
      const float mean_gx = float(sum_gx / double(cols));
      for_each_value(l, a0,
                     [&](int64_t i, int64_t a) { dxr[i] = rs * (dxhat(i, a) - mean_g - ((xr[i] - m) * rs - off) * mean_gx); });
    }
  }
  if (dweight || dbias) affine_backward(dweight, dbias, dy, x, mean, rstd, offset.data(), l);
}

}  // namespace minidl::kernels
