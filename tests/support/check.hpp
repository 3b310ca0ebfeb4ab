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

// The central differences' step (autograd::GradcheckOptions' eps) for each kind of op. The
// bounds are gradcheck's own defaults: atol and rtol for the truncation, h^2 |F'''| / 6, plus
// an allowance for the rounding of the outputs each element moves, which gradcheck computes
// from those outputs (docs/writing-a-layer.md). A step only trades truncation for rounding:
//
// Smooth ops (exp, log, tanh, softmax, normalizations, ...): gradcheck's default, 1e-2, where
// truncation is 1.7e-5 |F'''|.
inline constexpr double kSmoothStep = 1e-2;
// pow(x, p): a third derivative p (p - 1) (p - 2) x^(p - 3) that is 6 for x^3 (where the
// gradient 3 x^2 can be near 0) and 300 for x^-1.5 at x = 0.5, so truncation would reach the
// bound at h = 1e-2; h = 3e-3 cuts it 11 times.
inline constexpr double kSteepStep = 3e-3;
// Linear in each input (conv2d, matmul, gathers, joins, masks): no truncation, so a long step
// shrinks the rounding allowance (it is over 2h) and sharpens the check. Not for ops with
// kinks (max, relu, topk), where a long step can cross the kink.
inline constexpr double kLinearStep = 1e-1;

/// The library's autograd::gradcheck as a Catch check with the given step and gradcheck's
/// own bounds; the failure names the worst element.
inline void check_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> inputs,
                            double step = kSmoothStep) {
  const autograd::GradcheckReport report =
      autograd::gradcheck(f, std::move(inputs), {.eps = step, .raise_exception = false});
  INFO(report.message);
  CHECK(report.passed);
}

}  // namespace minidl::testing
