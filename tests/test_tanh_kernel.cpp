// The tanh kernel against double tanh (ulps) on a dense grid, against SLEEF's (PyTorch's),
// its vector loop against the formula one value at a time, PyTorch's saturation, odd
// symmetry, monotonicity over every float, and the same value wherever a value sits in the
// tensor and whatever the thread count.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/tanh.hpp"
#include "kernels/tanh_value.hpp"
#include "minidl/minidl.hpp"

namespace test_tanh_kernel {

using minidl::kernels::tanh_forward;

namespace {

// Distance in ulps between two floats of the same sign (0 when equal).
double ulps(float a, double exact) {
  const float rounded = float(exact);
  if (a == rounded) return 0.0;
  const float magnitude = std::abs(rounded);
  const float below = std::nextafter(magnitude, 0.0f);
  const double ulp = magnitude == 1.0f ? double(1.0f - below) : double(std::nextafter(magnitude, 2.0f) - magnitude);
  return std::abs(double(a) - exact) / ulp;
}

// Every 1e-3 over [-10, 10] (as PyTorch's fixture grid), every 1e-5 over [-1, 1], every
// float in [0.86, 0.94] (around the formula's switch at 0.9, where its error peaks), tiny values near 0 where a
// relative error shows, and the edges of saturation.
std::vector<float> dense_grid() {
  std::vector<float> x;
  for (int64_t i = -10000; i <= 10000; ++i) x.push_back(float(double(i) / 1000));
  for (int64_t i = -100000; i <= 100000; ++i) x.push_back(float(i) * 1e-5f);
  for (float v = 0.86f; v < 0.94f; v = std::nextafter(v, 1.0f)) x.insert(x.end(), {v, -v});
  for (float tiny = 1e-30f; tiny < 1e-3f; tiny *= 1.7f) x.insert(x.end(), {tiny, -tiny});
  for (float edge : {7.9053111f, 7.9053112f, 8.66f, 8.67f, 9.0f, 9.01f, 9.02f, 10.0f, 10.01f, 15.0f, 88.0f, 1e30f})
    x.insert(x.end(), {edge, -edge});
  return x;
}

// How many floats lie between a and b (0 when equal); a and b of the same sign.
int64_t floats_apart(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, sizeof ia);
  std::memcpy(&ib, &b, sizeof ib);
  return std::abs(int64_t(ia) - int64_t(ib));
}

}  // namespace

TEST_CASE("tanh is within 1.15 ulp of double tanh on a dense grid", "[tanh][kernels]") {
  const std::vector<float> x = dense_grid();
  std::vector<float> y(x.size());
  tanh_forward(y.data(), x.data(), int64_t(x.size()));
  double worst = 0.0;
  float worst_at = 0.0f;
  for (size_t i = 0; i < x.size(); ++i) {
    const double error = ulps(y[i], std::tanh(double(x[i])));
    if (error > worst) worst = error, worst_at = x[i];
  }
  INFO("worst error " << worst << " ulp at x = " << worst_at);
  // The formula's bound, measured over every float (docs/numerics.md): 1.145 ulp, at
  // x = 0.8796 (near the polynomial's end). SLEEF's, PyTorch's, is 1 ulp.
  CHECK(worst <= 1.15);
}

TEST_CASE("tanh is at most 2 floats from SLEEF's u10, PyTorch's tanh", "[tanh][kernels]") {
  const std::vector<float> x = dense_grid();
  std::vector<float> ours(x.size()), sleef(x.size());
  tanh_forward(ours.data(), x.data(), int64_t(x.size()));
  minidl::kernels::tanh_span_sleef(sleef.data(), x.data(), int64_t(x.size()));
  int64_t worst = 0, differing = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    worst = std::max(worst, floats_apart(ours[i], sleef[i]));
    differing += ours[i] != sleef[i];
  }
  INFO(differing << " of " << x.size() << " values differ");
  // Each is within about 1 ulp of the exact value, so they can sit 2 floats apart.
  CHECK(worst <= 2);
}

TEST_CASE("tanh's vector loop gives the bits of its formula one value at a time", "[tanh][kernels]") {
  // The tests compile the formula with their own flags (no -march=native): the same bits,
  // as every operation in it rounds once.
  std::vector<float> x = dense_grid();
  x.insert(x.end(), {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::denorm_min(), -0.0f});
  std::vector<float> one_by_one(x.size()), vectorized(x.size());
  for (size_t i = 0; i < x.size(); ++i) one_by_one[i] = minidl::kernels::tanh_value(x[i]);
  tanh_forward(vectorized.data(), x.data(), int64_t(x.size()));
  CHECK(std::memcmp(one_by_one.data(), vectorized.data(), x.size() * sizeof(float)) == 0);
}

TEST_CASE("tanh saturates to exactly +-1 with gradient 0, keeps NaN, is odd", "[tanh][kernels]") {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x{0.0f, 0.5f, -0.5f, 9.1f, -9.1f, 10.0f, 20.0f, -20.0f, inf, -inf, std::nanf("")};
  std::vector<float> y(x.size());
  tanh_forward(y.data(), x.data(), int64_t(x.size()));
  CHECK(y[0] == 0.0f);
  CHECK(y[1] == -y[2]);
  CHECK(y[1] == Approx(0.46211716f).margin(6e-8));
  for (size_t i : {3, 5, 6, 8}) CHECK(y[i] == 1.0f);
  for (size_t i : {4, 7, 9}) CHECK(y[i] == -1.0f);
  CHECK(std::isnan(y[10]));
  // PyTorch: tanh(full(16, 10)) is 1 with gradient 0 in every position.
  for (int64_t n : {1, 7, 8, 16, 17, 33}) {
    minidl::Tensor t = minidl::Tensor::full({n}, 10.0f).requires_grad_();
    minidl::Tensor out = minidl::tanh(t);
    minidl::sum(out).backward();
    INFO("n = " << n);
    CHECK(out.to_vector() == std::vector<float>(size_t(n), 1.0f));
    CHECK(t.grad().to_vector() == std::vector<float>(size_t(n), 0.0f));
  }
}

TEST_CASE("tanh gives each value the same bits wherever it sits", "[tanh][kernels]") {
  minidl::Generator gen(7);
  minidl::Tensor x = minidl::Tensor::randn({1000}, gen, 0.0f, 4.0f);
  std::vector<float> whole(1000);
  tanh_forward(whole.data(), x.data(), 1000);
  for (int64_t start : {0, 1, 3, 5, 13, 990, 999}) {  // every offset into a vector and the tails
    float alone = 0.0f;
    tanh_forward(&alone, x.data() + start, 1);
    CHECK(std::memcmp(&alone, &whole[size_t(start)], sizeof alone) == 0);
    std::vector<float> part(size_t(1000 - start));
    tanh_forward(part.data(), x.data() + start, 1000 - start);
    CHECK(std::memcmp(part.data(), whole.data() + start, part.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("tanh is odd to the bit, -0 and NaN included", "[tanh][kernels]") {
  std::vector<float> x = dense_grid();
  x.insert(x.end(), {0.0f, std::numeric_limits<float>::infinity(), std::nanf("")});
  std::vector<float> negated(x.size());
  for (size_t i = 0; i < x.size(); ++i) negated[i] = -x[i];
  std::vector<float> y(x.size()), y_negated(x.size());
  tanh_forward(y.data(), x.data(), int64_t(x.size()));
  tanh_forward(y_negated.data(), negated.data(), int64_t(x.size()));
  int64_t asymmetric = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float flipped = -y[i];
    asymmetric += std::memcmp(&flipped, &y_negated[i], sizeof flipped) != 0;
  }
  CHECK(asymmetric == 0);
  CHECK(std::signbit(y_negated[x.size() - 3]));  // tanh(-0) = -0, as PyTorch
}

TEST_CASE("tanh never decreases from one float to the next, over every float in [2^-12, 9.1]", "[tanh][kernels]") {
  // Below 2^-12, x^3 / 3 is under a hundredth of an ulp of x, and the 8e8 floats there take
  // most of the time: `bench_tanh --all-floats` checks every float from 0 (docs/numerics.md).
  // Past 9.1 the formula's input is clamped to 9.1: the same value, 1 (the saturation test).
  constexpr uint32_t kBegin = 0x39800000u;  // 2^-12
  constexpr uint32_t kEnd = 0x4111999bu;    // the float after 9.1f
  constexpr uint32_t kBlock = 1u << 20;
  std::vector<float> x(kBlock), y(kBlock);
  float previous = 0.0f;
  int64_t decreases = 0;
  float first_at = 0.0f;
  for (uint32_t start = kBegin; start < kEnd; start += kBlock) {
    const uint32_t count = std::min(kBlock, kEnd - start);
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t bits = start + i;
      std::memcpy(&x[i], &bits, sizeof(float));
    }
    tanh_forward(y.data(), x.data(), int64_t(count));
    for (uint32_t i = 0; i < count; ++i) {
      if (y[i] < previous && decreases++ == 0) first_at = x[i];
      previous = y[i];
    }
  }
  INFO(decreases << " decreasing steps, the first at x = " << first_at);
  CHECK(decreases == 0);
  CHECK(previous == 1.0f);
}

}  // namespace test_tanh_kernel
