#pragma once
// Row-wise normalization kernels: plain loops, no autograd. LayerNorm, RMSNorm and
// GroupNorm all see their input as `rows` rows, each normalized on its own:
//   LayerNorm (.., D)     -> rows = numel / D, channels = D,     inner = 1, groups = 1
//   GroupNorm (N, C, S..) -> rows = N * G,     channels = C / G, inner = S, groups = G
// A row is `channels` blocks of `inner` contiguous values; block c of row r uses the
// affine entry (r % groups) * channels + c, so GroupNorm's per-channel weight and
// LayerNorm's per-column weight are the same loop.
#include <cstdint>

#include "kernels/norm/norm_stats.hpp"

namespace minidl::kernels {

struct RowNormLayout {
  int64_t rows = 1;
  int64_t channels = 1;  // affine entries per row
  int64_t inner = 1;     // contiguous values per affine entry
  int64_t groups = 1;    // rows cycle through this many sets of affine entries
  bool centered = true;  // false: RMSNorm (no mean subtracted)
  int64_t cols() const { return channels * inner; }
};

/// out = (x - mean) * rstd * weight + bias per row, rstd = 1 / sqrt(var + eps) with the
/// biased variance (two passes: never E[x^2] - E[x]^2). RMSNorm: out = x * rstd * weight
/// with rstd = 1 / sqrt(mean(x^2) + eps). Writes the stats the backward needs where
/// their pointers are not null; weight and bias (groups * channels) may be null.
void row_norm_forward(float* out, const NormStats& stats, const float* x, const float* weight, const float* bias,
                      const RowNormLayout& layout, double eps);

/// Gradients of row_norm_forward from its saved stats (mean and mean_rest only when
/// centered). Each of dx (rows, cols), dweight and dbias (groups * channels) is written
/// (not accumulated) when not null; weight may be null (taken as 1).
void row_norm_backward(float* dx, float* dweight, float* dbias, const float* dy, const float* x, const NormStats& stats,
                       const float* weight, const RowNormLayout& layout);

}  // namespace minidl::kernels
