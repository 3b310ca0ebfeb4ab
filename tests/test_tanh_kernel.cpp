#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/tanh.hpp"

using minidl::kernels::tanh_forward;

TEST_CASE("The vectorized tanh stays within 4e-7 of double tanh on a dense grid", "[tanh][kernels]") {
  // Every 1e-5 over [-10, 10], plus the tiny values near 0 where a relative error shows.
  std::vector<float> x;
  for (int64_t i = -1000000; i <= 1000000; ++i) x.push_back(float(i) * 1e-5f);
  for (float tiny = 1e-30f; tiny < 1e-3f; tiny *= 1.7f) x.insert(x.end(), {tiny, -tiny});
  std::vector<float> y(x.size());
  tanh_forward(y.data(), x.data(), int64_t(x.size()));
  double worst = 0.0, worst_relative_tiny = 0.0;
  float worst_at = 0.0f;
  for (size_t i = 0; i < x.size(); ++i) {
    const double exact = std::tanh(double(x[i]));
    const double error = std::abs(double(y[i]) - exact);
    if (error > worst) worst = error, worst_at = x[i];
    if (std::abs(x[i]) < 1e-3f && x[i] != 0.0f)
      worst_relative_tiny = std::max(worst_relative_tiny, error / std::abs(exact));
  }
  INFO("worst abs error " << worst << " at x = " << worst_at);
  CHECK(worst < 4e-7);
  CHECK(worst_relative_tiny < 3e-7);
}

TEST_CASE("The vectorized tanh is odd, saturates to +-1 and keeps NaN", "[tanh][kernels]") {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x{0.0f, 0.5f, -0.5f, 20.0f, -20.0f, inf, -inf, std::nanf("")};
  std::vector<float> y(x.size());
  tanh_forward(y.data(), x.data(), int64_t(x.size()));
  CHECK(y[0] == 0.0f);
  CHECK(y[1] == -y[2]);
  CHECK(y[1] == Approx(0.46211716f).margin(4e-7));
  CHECK(std::abs(y[3] - 1.0f) < 1e-6f);
  CHECK(std::abs(y[4] + 1.0f) < 1e-6f);
  CHECK(std::abs(y[5] - 1.0f) < 1e-6f);
  CHECK(std::abs(y[6] + 1.0f) < 1e-6f);
  CHECK(std::isnan(y[7]));
}
