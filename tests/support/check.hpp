#pragma once
// Test helpers: check_close (values) and check_gradients (autograd::gradcheck as a Catch check).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <sstream>
#include <vector>

#include "minidl/minidl.hpp"

namespace minidl::testing {

/// Passes when |actual - expected| <= atol + rtol |expected| everywhere; otherwise reports
/// the worst element and the first mismatch.
inline void check_close(const Tensor& actual, const Tensor& expected, double atol = 1e-5, double rtol = 1e-4) {
  INFO("actual " << actual << "\nexpected " << expected);
  REQUIRE(actual.shape() == expected.shape());
  double worst = 0.0;
  int64_t worst_at = -1, first_bad = -1;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double a = actual.data()[i], e = expected.data()[i];
    double diff = std::abs(a - e);
    bool bad = !(diff <= atol + rtol * std::abs(e)) && !(std::isnan(a) && std::isnan(e));
    if (bad && first_bad < 0) first_bad = i;
    if (diff > worst || std::isnan(diff)) worst = diff, worst_at = i;
  }
  INFO("max |diff| " << worst << " at flat index " << worst_at << "; first mismatch at flat index " << first_bad);
  CHECK(first_bad == -1);
}

inline void check_close(const Tensor& actual, const std::vector<float>& expected, double atol = 1e-5,
                        double rtol = 1e-4) {
  check_close(actual, Tensor::from_vector(expected, actual.shape()), atol, rtol);
}

/// A gradient check's central-difference step and bounds (autograd::GradcheckOptions' eps,
/// atol, rtol): an element passes when |analytic - numeric| <= atol + rtol |numeric|.
struct GradTolerance {
  double eps;
  double atol;
  double rtol;
};

// The bounds, sized from what float32 central differences can promise. gradcheck compares
// backprop with numeric = (F(x + h) - F(x - h)) / 2h, F = sum(f(x) * v) summed in double, which
// is off by two terms:
//   truncation  h^2 |F'''| / 6: 1.7e-5 |F'''| at h = 1e-2. Pure arithmetic, the same on
//               every machine;
//   rounding    the float32 outputs that x_i moves (m of them) are each rounded to about an
//               ulp, u |f| with u = 1.2e-7, so about u |f| |v| sqrt(m) / h: 1.2e-5 |f| |v| at
//               h = 1e-2 for one output (|v| is a normal draw, mostly below 3). This term
//               changes with the kernels and the summation order.
// Each row keeps both well below atol 1e-4 + rtol 1e-3 |numeric| for O(1) inputs, the bound
// PyTorch's float32 smooth ops keep with these differences; a backward 2% off exceeds it
// wherever |numeric| > 5e-3. Only the step differs between rows.
//
// Elementwise ops with O(1) derivatives (exp, log, sqrt, rsqrt, sigmoid, tanh, gelu, silu) and
// ops with few outputs per input: both terms near 1e-5.
inline constexpr GradTolerance kSmoothOp{.eps = 1e-2, .atol = 1e-4, .rtol = 1e-3};
// pow(x, p): a third derivative p (p - 1) (p - 2) x^(p - 3) that is 6 for x^3 (where the
// gradient 3 x^2 can be near 0) and 300 for x^-1.5 at x = 0.5, so truncation would reach the
// bound at h = 1e-2; h = 3e-3 cuts it 11 times and leaves rounding at 4e-5 |f| |v|.
inline constexpr GradTolerance kSteepOp{.eps = 3e-3, .atol = 1e-4, .rtol = 1e-3};
// Linear in each input (conv2d, matmul, linear, sums, means, averaging pools): truncation is 0,
// and an input moves many outputs (a conv weight: N Ho Wo of them, through Winograd's
// transforms), so h = 1e-1 cuts the rounding 10 times. Not for ops with kinks (max, relu).
inline constexpr GradTolerance kLinearOp{.eps = 1e-1, .atol = 1e-4, .rtol = 1e-3};
// Normalizations over a group of m values (GroupNorm with one group: m = 36): an input moves
// every output of its group, sqrt(m) = 6 times the rounding; h = 3e-2 cuts it 3 times. As an
// input moves its group's mean and spread by O(1/m), the outputs' third derivatives in it are
// O(1 / (m sigma^3)): truncation stays near 1e-5 for inputs of unit spread.
inline constexpr GradTolerance kNormOp{.eps = 3e-2, .atol = 1e-4, .rtol = 1e-3};

/// The library's autograd::gradcheck as a Catch check at the given bounds (by default the
/// smooth ops'); the failure names the worst element.
inline void check_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> inputs,
                            const GradTolerance& tolerance = kSmoothOp) {
  const autograd::GradcheckReport report = autograd::gradcheck(
      f, std::move(inputs),
      {.eps = tolerance.eps, .atol = tolerance.atol, .rtol = tolerance.rtol, .raise_exception = false});
  INFO(report.message);
  CHECK(report.passed);
}

}  // namespace minidl::testing
