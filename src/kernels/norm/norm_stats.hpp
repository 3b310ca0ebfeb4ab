#pragma once
// The statistics a norm's forward saves for its backward.
#include <cmath>
#include <cstdint>

namespace minidl::kernels {

/// Per row (LayerNorm, RMSNorm, GroupNorm) or per channel (BatchNorm): the mean as
/// mean + mean_rest, float's rounding of the exact mean and what that rounding left out
/// ((x - mean) - mean_rest is exact to float for x near the mean, so a mean of 1e4
/// against a spread of 1e-1 loses nothing), and rstd = 1 / sqrt(var + eps). Each points
/// to `rows` (or C) floats, or is null where not wanted (RMSNorm has no mean).
struct NormStats {
  float* mean = nullptr;
  float* mean_rest = nullptr;
  float* rstd = nullptr;
};

/// A double mean split into float mean + mean_rest, with rstd, for one row or channel.
struct Moments {
  float mean = 0.0f, mean_rest = 0.0f, rstd = 1.0f;

  /// Centered on exact_mean, rstd still to set.
  static Moments around(double exact_mean) {
    Moments m;
    m.mean = float(exact_mean);
    m.mean_rest = float(exact_mean - double(m.mean));
    return m;
  }
  void set_variance(double var, double eps) { rstd = float(1.0 / std::sqrt(var + eps)); }
  /// x - mean, exact to float for x near the mean.
  float centered(float x) const { return (x - mean) - mean_rest; }
  void store(const NormStats& s, int64_t i) const {
    if (s.mean) s.mean[i] = mean;
    if (s.mean_rest) s.mean_rest[i] = mean_rest;
    if (s.rstd) s.rstd[i] = rstd;
  }
  static Moments load(const NormStats& s, int64_t i) {
    Moments m;
    if (s.mean) m.mean = s.mean[i];
    if (s.mean_rest) m.mean_rest = s.mean_rest[i];
    m.rstd = s.rstd[i];
    return m;
  }
};

}  // namespace minidl::kernels
