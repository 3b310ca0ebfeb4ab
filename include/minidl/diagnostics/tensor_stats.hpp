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

/// Accumulates in double; throws for an empty tensor or bins < 1.
TensorStats describe(const Tensor& t, float saturation = 0.97f, const HistogramOptions& histogram = {});
Histogram histogram(const Tensor& t, const HistogramOptions& options = {});
/// torch.std(t) in double (Bessel's correction).
double standard_deviation(const Tensor& t);

}  // namespace minidl::diagnostics
