#include "kernels/norm/row_norm.hpp"

#include <algorithm>

#include "kernels/broadcast.hpp"
#include "kernels/parallel_for.hpp"
#include "lane_sum.hpp"
#include "scratch.hpp"

namespace minidl::kernels {
namespace {

// A loop over blocks of `rows` rows goes parallel past kParallelElements values.
int64_t rows_grain(int64_t rows, const RowNormLayout& l) { return grain_for(rows * l.cols()); }

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

// Rows go in groups of kGroupRows: each step runs over the group's rows before the next
// starts, so one row's scalar tail (a division, a square root) overlaps the others' vector
// work instead of stalling every row: on the lesson's (64, 64) rows of 64 values, that
// tail was most of the time.
constexpr int64_t kGroupRows = 8;
static_assert(kGroupRows == 8, "lane_sums8 sums a group of 8 rows");

// The forward takes its rows in blocks of up to kBlockGroups groups (and kBlockValues values,
// so a block stays in L1), each pass over all of a block's groups before the next: one
// group's horizontal sums and scalar steps, a chain of dependent operations between its
// passes, overlap the next group's vector work instead of stalling each pass.
constexpr int64_t kBlockGroups = 4;
constexpr int64_t kBlockValues = 4096;

// The 8 floats of a group's sums (lane_sums8's doubles; for rows of up to 16 * kLaneRun
// values each is a float sum already, so the conversion is exact).
Floats8 floats8(const double* sums) {
  Floats8 v;
  for (int k = 0; k < 8; ++k) v[k] = float(sums[k]);
  return v;
}

// Mean (as mean + mean_rest; 0 when uncentered) and rstd of each of a group's rows, row k's
// in lane k.
struct GroupMoments {
  float mean[kGroupRows] = {}, rest[kGroupRows] = {}, rstd[kGroupRows] = {};
  Moments row(int64_t k) const { return {mean[k], rest[k], rstd[k]}; }
};

// The moments take two passes (never E[x^2] - E[x]^2), each summing the group's rows
// together (lane_sums8). The first sums x - x[0]: exact for values near each other, so a
// mean of 1e4 against a spread of 1e-1 keeps its digits in float sums.
//
// The rows' scalar steps after each sum run as one 8-lane float vector: each adds less error
// than its sum already has (the bound: docs/numerics.md, "Row norms: float scalar steps").
// The first pass: mean and mean_rest of the `count` rows from x (n values each).
void group_mean(GroupMoments& g, const float* x, int64_t count, int64_t n) {
  double sums[1][kGroupRows];
  Floats8 shift{};  // lane by lane: 8 scalar stores read back as one vector would stall
  for (int64_t k = 0; k < count; ++k) shift[k] = x[k * n];
  lane_sums8<1>(
      count, n, [&](int64_t k, auto at, auto* v) { v[0] = at(x + k * n) - x[k * n]; }, sums);
  const Floats8 s = floats8(sums[0]) / float(n);
  const Floats8 sum = shift + s, s_part = sum - shift;  // TwoSum: rest = (shift + s) - sum exactly
  const Floats8 round_off = (shift - (sum - s_part)) + (s - s_part);
  std::memcpy(g.mean, &sum, sizeof g.mean);
  std::memcpy(g.rest, &round_off, sizeof g.rest);
}

// The second pass: rstd from the squared deviations from g's mean (from x itself when not
// centered).
void group_rstd(GroupMoments& g, const float* x, int64_t count, int64_t n, bool centered, double eps) {
  double sums[1][kGroupRows];
  if (centered) {
    lane_sums8<1>(
        count, n,
        [&](int64_t k, auto at, auto* v) {
          const auto d = (at(x + k * n) - g.mean[k]) - g.rest[k];
          v[0] = d * d;
        },
        sums);
  } else {
    lane_sums8<1>(
        count, n,
        [&](int64_t k, auto at, auto* v) {
          const auto xk = at(x + k * n);
          v[0] = xk * xk;
        },
        sums);
  }
  const Floats8 r = 1.0f / sqrt8(floats8(sums[0]) / float(n) + float(eps));
  std::memcpy(g.rstd, &r, sizeof g.rstd);
}

// out = ((x - mean) - mean_rest) * rstd * weight + bias for `count` flat rows (LayerNorm,
// RMSNorm: inner == 1, groups == 1, so every row has the same affine entries, or none).
void normalize_flat(float* out, const float* x, const GroupMoments& m, int64_t count, const float* weight,
                    const float* bias, const RowNormLayout& l) {
  const int64_t n = l.cols();
  with_affine(weight, bias, [&](auto w, auto b) {
    for (int64_t k = 0; k < count; ++k) {
      const float mean = m.mean[k], rest = m.rest[k], rs = m.rstd[k];
      const float* xr = x + k * n;
      float* yr = out + k * n;
      if (l.centered) {
#pragma omp simd  // out never overlaps x but the compiler cannot see it
        for (int64_t i = 0; i < n; ++i) yr[i] = ((xr[i] - mean) - rest) * rs * w(ScalarAt{i}) + b(ScalarAt{i});
      } else {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] * rs * w(ScalarAt{i}) + b(ScalarAt{i});
      }
    }
  });
}

// yr = ((x - mean) - mean_rest) * rstd * weight + bias for one row; weight and bias (or
// null) at the row's first affine entry.
void normalize_row(float* yr, const float* xr, Moments m, const float* weight, const float* bias,
                   const RowNormLayout& l) {
  const float mean = m.mean, rest = m.mean_rest, rs = m.rstd;
  with_affine(weight, bias, [&](auto w, auto b) {
    for (int64_t c = 0; c < l.channels; ++c) {
      const float wc = w(ScalarAt{c}), bc = b(ScalarAt{c});
      const float* xc = xr + c * l.inner;
      float* yc = yr + c * l.inner;
      for (int64_t s = 0; s < l.inner; ++s) yc[s] = ((xc[s] - mean) - rest) * rs * wc + bc;
    }
  });
}

// Rows go in chunks of kChunkItems batch items (`groups` rows each); a chunk sums its own
// weight and bias gradients, then the chunks are added in order: the same bits whatever
// the thread count, and no second sweep of x and dy for the parameter gradients. The
// partial sums are double, so a chunk's 32 rows add no float rounding; LayerNorm and
// RMSNorm add each group's 8 rows in float first (group_dx_flat: within 7u of the terms'
// magnitudes, as PyTorch's float accumulation).
constexpr int64_t kChunkItems = 32;

// The backward, with xhat = (x - mean) * rstd and g = dy * weight over a row's n values:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))   (uncentered: no mean(g) term)
// and dweight += dy * xhat, dbias += dy (into the chunk's partials).

// sum(g) and sum(g * xhat) of one row. GroupNorm (inner > 1) also adds each channel's
// sum(dy * xhat) and sum(dy) to dw and db (null: not wanted). weight, dw and db point at
// the row's first affine entry.
struct RowSums {
  double g = 0.0, gx = 0.0;
};
RowSums row_sums(double* dw, double* db, const float* dyr, const float* xr, Moments m, const float* weight,
                 const RowNormLayout& l) {
  const float mean = m.mean, rest = m.mean_rest, rs = m.rstd;
  RowSums total;
  with_affine(weight, nullptr, [&](auto w, auto) {
    if (l.inner == 1) {  // LayerNorm, RMSNorm
      double sums[2];
      lane_sums<2>(
          l.channels,
          [&](auto at, auto* v) {
            const auto g = at(dyr) * w(at);
            v[0] = g;
            v[1] = g * (((at(xr) - mean) - rest) * rs);
          },
          sums);
      total = {sums[0], sums[1]};
      return;
    }
    // GroupNorm: per channel, sum(dy) and sum(dy * xhat) are the parameter gradients'
    // terms, and weighted by the channel's weight they make the row's two sums.
    for (int64_t c = 0; c < l.channels; ++c) {
      const float* xc = xr + c * l.inner;
      const float* dyc = dyr + c * l.inner;
      double sums[2];
      lane_sums<2>(
          l.inner,
          [&](auto at, auto* v) {
            v[0] = at(dyc);
            v[1] = at(dyc) * (((at(xc) - mean) - rest) * rs);
          },
          sums);
      const double sum_dy = sums[0], sum_dy_xhat = sums[1];
      total.g += double(w(ScalarAt{c})) * sum_dy;
      total.gx += double(w(ScalarAt{c})) * sum_dy_xhat;
      if (dw) {
        dw[c] += sum_dy_xhat;
        db[c] += sum_dy;
      }
    }
  });
  return total;
}

// dx of one row (when dxr is not null) from mean(g) and mean(g * xhat); LayerNorm and
// RMSNorm (inner == 1) also add dy * xhat and dy to dw and db (when not null).
void row_dx(float* dxr, double* dw, double* db, const float* dyr, const float* xr, Moments m, float mean_g,
            float mean_gx, const float* weight, const RowNormLayout& l) {
  const float mean = m.mean, rest = m.mean_rest, rs = m.rstd;
  with_affine(weight, nullptr, [&](auto w, auto) {
    if (l.inner == 1) {
      for (int64_t i = 0; i < l.channels; ++i) {
        const float xhat = ((xr[i] - mean) - rest) * rs;
        if (dxr) dxr[i] = rs * (dyr[i] * w(ScalarAt{i}) - mean_g - xhat * mean_gx);
        if (dw) {
          dw[i] += double(dyr[i] * xhat);
          db[i] += double(dyr[i]);
        }
      }
      return;
    }
    if (!dxr) return;
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

// sums[0][k] = sum(g) and sums[1][k] = sum(g * xhat) of row k of the `count` rows from x
// and dy, with inner == 1 and groups == 1 (LayerNorm, RMSNorm: every row has the same
// affine entries, at weight, or none): row_sums' two sums for a whole group at once (lane_sums8).
void group_sums(double (*sums)[kGroupRows], const float* dy, const float* x, const Moments* m, int64_t count,
                const float* weight, const RowNormLayout& l) {
  const int64_t n = l.cols();
  float mean[kGroupRows] = {}, rest[kGroupRows] = {}, rstd[kGroupRows] = {};
  for (int64_t k = 0; k < count; ++k) {
    mean[k] = m[k].mean;
    rest[k] = m[k].mean_rest;
    rstd[k] = m[k].rstd;
  }
  with_affine(weight, nullptr, [&](auto w, auto) {
    lane_sums8<2>(
        count, n,
        [&](int64_t k, auto at, auto* v) {
          const auto g = at(dy + k * n) * w(at);
          v[0] = g;
          v[1] = g * (((at(x + k * n) - mean[k]) - rest[k]) * rstd[k]);
        },
        sums);
  });
}

// dx of the group's `count` flat rows (LayerNorm, RMSNorm: inner == 1, groups == 1) from
// mean(g) and mean(g * xhat), and, when dw is not null, their dy * xhat and dy added to dw
// and db: summed over the group's rows in float first (at most 8 terms in row order, so
// within 7u of their sum of magnitudes), then into the chunk's double partials once a
// group instead of once a row (a float-to-double conversion and a double add per value
// were most of the sweep's work).
void group_dx_flat(float* dx, double* dw, double* db, const float* dy, const float* x, const Moments* m,
                   const float* mean_g, const float* mean_gx, int64_t count, const float* weight, int64_t n) {
  constexpr int64_t kSpan = 64;  // columns at a time: the group's float partials stay in registers or L1
  with_affine(weight, nullptr, [&](auto w, auto) {
    for (int64_t i0 = 0; i0 < n; i0 += kSpan) {
      const int64_t width = std::min(kSpan, n - i0);
      float part_w[kSpan] = {}, part_b[kSpan] = {};  // (width) the group's sums of dy * xhat and dy
      for (int64_t k = 0; k < count; ++k) {
        const float mean = m[k].mean, rest = m[k].mean_rest, rs = m[k].rstd, mg = mean_g[k], mgx = mean_gx[k];
        const float* xr = x + k * n + i0;
        const float* dyr = dy + k * n + i0;
        float* dxr = dx + k * n + i0;
#pragma omp simd  // the outputs never overlap the inputs, which the compiler cannot see
        for (int64_t i = 0; i < width; ++i) {
          const float xhat = ((xr[i] - mean) - rest) * rs;
          dxr[i] = rs * (dyr[i] * w(ScalarAt{i0 + i}) - mg - xhat * mgx);
          part_w[i] += dyr[i] * xhat;
          part_b[i] += dyr[i];
        }
      }
      if (dw)
        for (int64_t i = 0; i < width; ++i) {
          dw[i0 + i] += double(part_w[i]);
          db[i0 + i] += double(part_b[i]);
        }
    }
  });
}

// The backward of `count` rows from r0 (a group): sums first, then dx.
void backward_group(float* dx, double* dw, double* db, const float* dy, const float* x, const NormStats& stats,
                    const float* weight, const RowNormLayout& l, int64_t r0, int64_t count) {
  const int64_t n = l.cols();
  Moments m[kGroupRows];
  float mean_g[kGroupRows] = {}, mean_gx[kGroupRows] = {};  // (count)
  auto affine_at = [&](auto* p, int64_t r) { return p ? p + (r % l.groups) * l.channels : nullptr; };
  for (int64_t k = 0; k < count; ++k) m[k] = Moments::load(stats, r0 + k);
  if (dx && l.inner == 1 && l.groups == 1) {  // LayerNorm, RMSNorm: the group's rows summed together
    double sums[2][kGroupRows];
    group_sums(sums, dy + r0 * n, x + r0 * n, m, count, affine_at(weight, r0), l);
    for (int64_t k = 0; k < count; ++k) {
      mean_g[k] = l.centered ? float(sums[0][k] / double(n)) : 0.0f;
      mean_gx[k] = float(sums[1][k] / double(n));
    }
  } else if (dx || l.inner > 1) {  // GroupNorm: row by row
    RowSums sums[kGroupRows];
    for (int64_t k = 0; k < count; ++k) {
      const int64_t r = r0 + k;
      sums[k] = row_sums(l.inner > 1 ? affine_at(dw, r) : nullptr, l.inner > 1 ? affine_at(db, r) : nullptr, dy + r * n,
                         x + r * n, m[k], affine_at(weight, r), l);
    }
    for (int64_t k = 0; k < count; ++k) {
      mean_g[k] = l.centered ? float(sums[k].g / double(n)) : 0.0f;
      mean_gx[k] = float(sums[k].gx / double(n));
    }
  }
  if (dx && l.inner == 1 && l.groups == 1) {
    group_dx_flat(dx + r0 * n, dw, db, dy + r0 * n, x + r0 * n, m, mean_g, mean_gx, count, weight, n);
    return;
  }
  for (int64_t k = 0; k < count; ++k) {
    const int64_t r = r0 + k;
    row_dx(dx ? dx + r * n : nullptr, l.inner == 1 ? affine_at(dw, r) : nullptr,
           l.inner == 1 ? affine_at(db, r) : nullptr, dy + r * n, x + r * n, m[k], mean_g[k], mean_gx[k],
           affine_at(weight, r), l);
  }
}

// dweight and dbias (entries) from the chunks' partials (chunks, 2, entries).
void sum_partials(float* dweight, float* dbias, const double* partials, int64_t chunks, int64_t entries) {
  if (chunks == 1) {  // a batch of up to kChunkItems: the one chunk's partials are the sums
    if (dweight)
      for (int64_t e = 0; e < entries; ++e) dweight[e] = float(0.0 + partials[e]);
    if (dbias)
      for (int64_t e = 0; e < entries; ++e) dbias[e] = float(0.0 + partials[entries + e]);
    return;
  }
  sum_chunk_partials(partials, chunks, entries, [&](int64_t e, double dw, double db) {
    if (dweight) dweight[e] = float(dw);
    if (dbias) dbias[e] = float(db);
  });
}

}  // namespace

void row_norm_forward(float* out, const NormStats& stats, const float* x, const float* weight, const float* bias,
                      const RowNormLayout& l, double eps) {
  const int64_t cols = l.cols();
  const int64_t block_groups =
      std::clamp<int64_t>(kBlockValues / std::max<int64_t>(1, kGroupRows * cols), 1, kBlockGroups);
  const int64_t block_rows = block_groups * kGroupRows;
  const int64_t blocks = (l.rows + block_rows - 1) / block_rows;
  parallel_for(blocks, rows_grain(block_rows, l), [&](int64_t block) {
    const int64_t b0 = block * block_rows, b1 = std::min(l.rows, b0 + block_rows);
    GroupMoments m[kBlockGroups];
    auto each_group = [&](auto f) {
      for (int64_t r0 = b0, g = 0; r0 < b1; r0 += kGroupRows, ++g) f(m[g], r0, std::min(kGroupRows, b1 - r0));
    };
    if (l.centered && cols > 0)
      each_group([&](GroupMoments& gm, int64_t r0, int64_t count) { group_mean(gm, x + r0 * cols, count, cols); });
    each_group([&](GroupMoments& gm, int64_t r0, int64_t count) {
      group_rstd(gm, x + r0 * cols, count, cols, l.centered, eps);
    });
    each_group([&](GroupMoments& gm, int64_t r0, int64_t count) {
      for (int64_t k = 0; k < count; ++k) gm.row(k).store(stats, r0 + k);
      if (l.inner == 1 && l.groups == 1) {
        normalize_flat(out + r0 * cols, x + r0 * cols, gm, count, weight, bias, l);
        return;
      }
      for (int64_t k = 0; k < count; ++k) {
        const int64_t r = r0 + k;
        const int64_t a0 = (r % l.groups) * l.channels;  // the row's first affine entry
        normalize_row(out + r * cols, x + r * cols, gm.row(k), weight ? weight + a0 : nullptr,
                      bias ? bias + a0 : nullptr, l);
      }
    });
  });
}

void row_norm_backward(float* dx, float* dweight, float* dbias, const float* dy, const float* x, const NormStats& stats,
                       const float* weight, const RowNormLayout& l) {
  const int64_t entries = l.groups * l.channels;
  const int64_t chunk_rows = kChunkItems * l.groups;
  const int64_t chunks = (l.rows + chunk_rows - 1) / chunk_rows;
  const bool affine = dweight || dbias;
  double* partials = affine ? norm_scratch<double>(size_t(chunks * 2 * entries)) : nullptr;  // (chunks, 2, entries)
  parallel_for(chunks, rows_grain(chunk_rows, l), [&](int64_t chunk) {
    double* dw = affine ? partials + chunk * 2 * entries : nullptr;  // (entries)
    double* db = affine ? dw + entries : nullptr;                    // (entries)
    if (affine) std::fill(dw, dw + 2 * entries, 0.0);
    const int64_t r1 = std::min(l.rows, (chunk + 1) * chunk_rows);
    for (int64_t r0 = chunk * chunk_rows; r0 < r1; r0 += kGroupRows)
      backward_group(dx, dw, db, dy, x, stats, weight, l, r0, std::min(kGroupRows, r1 - r0));
  });
  if (affine) sum_partials(dweight, dbias, partials, chunks, entries);
}

}  // namespace minidl::kernels
