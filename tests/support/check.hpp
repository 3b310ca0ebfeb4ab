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

/// The library's autograd::gradcheck as a Catch check: passes when every input's gradient
/// matches central differences within atol + rtol |numeric|; the failure names the worst element.
inline void check_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> inputs,
                            double eps = 1e-2, double atol = 2e-3, double rtol = 2e-2) {
  const autograd::GradcheckReport report =
      autograd::gradcheck(f, std::move(inputs), {.eps = eps, .atol = atol, .rtol = rtol, .raise_exception = false});
  INFO(report.message);
  CHECK(report.passed);
}

}  // namespace minidl::testing
