#pragma once
// Summary figures of one tensor, as the "makemore part 3" diagnostics print them: mean,
// std, the share of saturated units, and a histogram with a fixed number of bins.
#include <cstdint>
#include <vector>

#include "minidl/tensor/tensor.hpp"

namespace minidl::diagnostics {

struct HistogramOptions {
  int64_t bins = 40;
  /// > 0: the bins cover [-range, range] and values beyond it count in the end bins; 0: the
  /// bins cover the tensor's [min, max] (widened by 0.5 each side when all values are equal).
  float range = 0.0f;
};

/// Equal-width bins from low to high; density[i] = count[i] / (n * width), so the bars
/// integrate to 1 as torch.histogram(..., density=True). Non-finite values are left out.
/// Bin j holds the values v with edge_j <= v < edge_{j+1}, edge_j = low + j * width in
/// double (the edges digits --stats prints), decided exactly, so a value on an edge is in
/// the bin above it on every machine; values below low count in the first bin, the top
/// edge and values above a fixed range in the last.
struct Histogram {
  double low = 0.0, high = 0.0;
  std::vector<double> density;
};

struct TensorStats {
  double mean = 0.0;
  double std = 0.0;        // with Bessel's correction, as torch.std (NaN for one value)
  double saturated = 0.0;  // share of |x| > the threshold, in [0, 1]
  Histogram histogram;
};

/// Two vectorized passes over the values and one for the histogram: sums in float lanes of
/// at most 16 values each, added into double per block of 256, so the mean is within 16
/// float epsilons of mean |x| and the std within 16 of itself (the squared deviations are
/// taken about the mean, on values scaled by a power of two: no overflow or underflow).
/// A NaN or an inf makes the mean NaN or infinite and the std NaN, as in torch; equal values
/// give their value and std 0 exactly. Throws for an empty tensor or bins outside [1, 2^24].
TensorStats describe(const Tensor& t, float saturation = 0.97f, const HistogramOptions& histogram = {});
Histogram histogram(const Tensor& t, const HistogramOptions& options = {});
/// torch.std(t) (Bessel's correction), as describe computes it.
double standard_deviation(const Tensor& t);

}  // namespace minidl::diagnostics
