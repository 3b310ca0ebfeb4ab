#pragma once
// Test helpers: check_close (values) and check_gradients (finite differences).
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

/// f maps the inputs to any tensor; its gradient is checked through sum(f * w) for a
/// fixed random w (so every output element matters) against central differences in
/// float, with a step and tolerance sized for float32.
inline void check_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                            std::vector<Tensor> inputs, double eps = 1e-2, double atol = 2e-3,
                            double rtol = 2e-2) {
  for (Tensor& x : inputs) x.requires_grad_(true);
  Tensor out = f(inputs);
  Generator gen(1234);
  Tensor weights = Tensor::randn(out.shape(), gen);
  auto objective = [&](const std::vector<Tensor>& xs) {
    Tensor y = f(xs);
    double total = 0.0;
    for (int64_t i = 0; i < y.numel(); ++i) total += double(y.data()[i]) * weights.data()[i];
    return total;
  };
  sum(mul(out, weights)).backward();
  for (size_t k = 0; k < inputs.size(); ++k) {
    Tensor analytic = inputs[k].grad();
    REQUIRE(analytic.defined());
    Tensor numeric = Tensor::zeros(inputs[k].shape());
    NoGradGuard no_grad;
    for (int64_t i = 0; i < inputs[k].numel(); ++i) {
      float& v = inputs[k].data()[i];
      const float saved = v;
      v = saved + float(eps);
      double up = objective(inputs);
      v = saved - float(eps);
      double down = objective(inputs);
      v = saved;
      numeric.data()[i] = float((up - down) / (2 * eps));
    }
    INFO("gradient of input " << k);
    check_close(analytic, numeric, atol, rtol);
  }
}

}  // namespace minidl::testing
