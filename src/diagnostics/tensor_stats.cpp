#include "minidl/diagnostics/tensor_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "minidl/tensor/error.hpp"

namespace minidl::diagnostics {
namespace {

void check_not_empty(const Tensor& t, const char* what) {
  if (t.numel() == 0)
    throw Error(cat(what, ": expected a tensor with at least one element, got shape ", minidl::to_string(t.shape())));
}

// The finite values' range; [0, 0] when none is finite.
std::pair<double, double> finite_range(const float* x, int64_t n) {
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(x[i])) low = std::min(low, double(x[i])), high = std::max(high, double(x[i]));
  return low <= high ? std::make_pair(low, high) : std::make_pair(0.0, 0.0);
}

}  // namespace

double standard_deviation(const Tensor& t) {
  check_not_empty(t, "standard_deviation");
  const float* x = t.data();
  const int64_t n = t.numel();
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const double mean = sum / double(n);
  double squares = 0.0;  // two passes: no cancellation when the mean is large against the spread
  for (int64_t i = 0; i < n; ++i) squares += (x[i] - mean) * (x[i] - mean);
  return n > 1 ? std::sqrt(squares / double(n - 1)) : std::numeric_limits<double>::quiet_NaN();
}

Histogram histogram(const Tensor& t, const HistogramOptions& options) {
  check_not_empty(t, "histogram");
  if (options.bins < 1) throw Error(cat("histogram: expected at least 1 bin, got ", options.bins));
  const float* x = t.data();
  const int64_t n = t.numel();
  Histogram h;
  if (options.range > 0.0f) {
    h.low = -double(options.range);
    h.high = double(options.range);
  } else {
    std::tie(h.low, h.high) = finite_range(x, n);
    if (h.low == h.high) h.low -= 0.5, h.high += 0.5;
  }
  const double width = (h.high - h.low) / double(options.bins);
  std::vector<int64_t> counts(size_t(options.bins), 0);
  int64_t counted = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) continue;
    const double at = std::floor((double(x[i]) - h.low) / width);
    counts[size_t(std::clamp(at, 0.0, double(options.bins - 1)))] += 1;  // the top edge joins the last bin
    ++counted;
  }
  h.density.resize(counts.size());
  for (size_t b = 0; b < counts.size(); ++b)
    h.density[b] = counted > 0 ? double(counts[b]) / (double(counted) * width) : 0.0;
  return h;
}

TensorStats describe(const Tensor& t, float saturation, const HistogramOptions& options) {
  check_not_empty(t, "describe");
  TensorStats s;
  const float* x = t.data();
  const int64_t n = t.numel();
  double sum = 0.0;
  int64_t saturated = 0;
  for (int64_t i = 0; i < n; ++i) {
    sum += x[i];
    saturated += std::abs(x[i]) > saturation;
  }
  s.mean = sum / double(n);
  s.std = standard_deviation(t);
  s.saturated = double(saturated) / double(n);
  s.histogram = histogram(t, options);
  return s;
}

}  // namespace minidl::diagnostics
