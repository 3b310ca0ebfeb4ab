// kernels::exp_nonpositive, the softmax's e^x in double: within 1 ulp of the exact value
// (long double expl, 64-bit mantissa, as the reference) over the whole range x <= 0, down
// through the subnormals to 0; and its edge values exactly.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/exp_value.hpp"

namespace test_exp_kernel {

namespace {

// |got - exact| in units of the last place of the double nearest to exact.
double ulps_off(double got, long double exact) {
  const double nearest = double(exact);
  const double ulp =
      nearest == 0.0 ? std::numeric_limits<double>::denorm_min() : std::nextafter(nearest, INFINITY) - nearest;
  return double(std::fabs((long double)got - exact) / (long double)ulp);
}

}  // namespace

TEST_CASE("exp_nonpositive is within 1 ulp of e^x for every x <= 0", "[kernels]") {
  std::vector<double> xs;
  std::mt19937_64 gen(21);
  std::uniform_real_distribution<double> wide(-745.2, 0.0), near_zero(-1.0, 0.0);
  for (int i = 0; i < 200000; ++i) xs.push_back(wide(gen));
  for (int i = 0; i < 100000; ++i) xs.push_back(near_zero(gen));
  for (int k = 0; k <= 1075; ++k) {  // around every multiple of ln 2, where n changes
    const double at = -double(k) * 0.69314718055994530942;
    for (double step : {-1e-12, 0.0, 1e-12}) xs.push_back(at + step);
  }
  for (double x : {-0.0, -1e-300, -4.9e-324, -1e-17, -708.39, -708.40, -709.78, -744.44, -745.13, -745.19})
    xs.push_back(x);
  double worst = 0.0, worst_x = 0.0;
  for (double x : xs) {
    if (x > 0.0) continue;
    const double off = ulps_off(minidl::kernels::exp_nonpositive(x), expl((long double)x));
    if (off > worst) {
      worst = off;
      worst_x = x;
    }
  }
  INFO("worst " << worst << " ulp at x = " << worst_x);
  REQUIRE(worst <= 1.0);
}

TEST_CASE("exp_nonpositive's edge values: 1 at 0, 0 past the subnormals and at -inf, NaN stays NaN", "[kernels]") {
  using minidl::kernels::exp_nonpositive;
  CHECK(exp_nonpositive(0.0) == 1.0);
  CHECK(exp_nonpositive(-0.0) == 1.0);
  CHECK(exp_nonpositive(-745.2) == 0.0);
  CHECK(exp_nonpositive(-1000.0) == 0.0);
  CHECK(exp_nonpositive(-INFINITY) == 0.0);
  CHECK(exp_nonpositive(-745.13) == std::numeric_limits<double>::denorm_min());
  CHECK(std::isnan(exp_nonpositive(std::numeric_limits<double>::quiet_NaN())));
}

}  // namespace test_exp_kernel
