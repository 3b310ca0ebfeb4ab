// describe(), histogram() and standard_deviation() against a plain double reference on
// awkward data: NaN and inf, equal values, values on and beside the bins' edges, sizes that
// are no multiple of the blocks, very large and very small magnitudes.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "minidl/minidl.hpp"

namespace test_tensor_stats {

using namespace minidl;
using diagnostics::HistogramOptions;
using diagnostics::TensorStats;

namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// The figures value by value in double: the definitions describe() documents.
struct Reference {
  double mean = 0.0, std = 0.0, mean_abs = 0.0, saturated = 0.0;
  double low = 0.0, high = 0.0;
  std::vector<double> density;
};

Reference reference(const std::vector<float>& x, float saturation, const HistogramOptions& options) {
  Reference r;
  const double n = double(x.size());
  double finite_low = INFINITY, finite_high = -INFINITY, counted = 0.0;
  for (float v : x) {
    r.mean += double(v) / n;
    r.mean_abs += std::abs(double(v)) / n;
    r.saturated += (std::abs(v) > saturation) / n;
    if (std::isfinite(v)) finite_low = std::min(finite_low, double(v)), finite_high = std::max(finite_high, double(v));
  }
  double squares = 0.0;
  for (float v : x) squares += (double(v) - r.mean) * (double(v) - r.mean);
  r.std = std::sqrt(squares / (n - 1.0));
  if (options.range > 0.0f) {
    r.low = -double(options.range), r.high = double(options.range);
  } else if (finite_low <= finite_high) {
    r.low = finite_low, r.high = finite_high;
  }
  if (r.low == r.high) r.low -= 0.5, r.high += 0.5;
  const double width = (r.high - r.low) / double(options.bins);
  std::vector<double> counts(size_t(options.bins), 0.0);
  for (float v : x) {
    if (!std::isfinite(v)) continue;
    int64_t bin = 0;  // the last edge low + j * width at or below v; the top edge in the last bin
    for (int64_t j = 1; j < options.bins; ++j)
      if (double(v) >= r.low + double(j) * width) bin = j;
    counts[size_t(bin)] += 1.0;
    counted += 1.0;
  }
  for (double c : counts) r.density.push_back(counted > 0.0 ? c / (counted * width) : 0.0);
  return r;
}

// Float32 promises: the sums run in float lanes of 16 values, so the mean is within 16
// float epsilons of the mean |x|; the std within a few of its own size.
void check_against_reference(const std::vector<float>& x, float saturation, const HistogramOptions& options) {
  const Tensor t = Tensor::from_vector(x);
  const TensorStats s = diagnostics::describe(t, saturation, options);
  const Reference r = reference(x, saturation, options);
  const double eps = std::numeric_limits<float>::epsilon();
  CHECK(std::abs(s.mean - r.mean) <= 16.0 * eps * r.mean_abs);
  CHECK(std::abs(s.std - r.std) <= 16.0 * eps * r.std);
  CHECK(diagnostics::standard_deviation(t) == s.std);
  CHECK(s.saturated == Approx(r.saturated).epsilon(1e-12));
  CHECK(s.histogram.low == r.low);
  CHECK(s.histogram.high == r.high);
  CHECK(s.histogram.density == r.density);  // exactly: the same counts
  const diagnostics::Histogram alone = diagnostics::histogram(t, options);
  CHECK(alone.density == s.histogram.density);
}

std::vector<float> normal(int64_t n, float mean, float std, uint64_t seed) {
  Generator gen(seed);
  return Tensor::randn({n}, gen, mean, std).to_vector();
}

}  // namespace

TEST_CASE("describe matches a double reference on ordinary data of any size", "[diagnostics][tensor_stats]") {
  for (int64_t n : {2, 15, 16, 17, 255, 256, 257, 4096, 4096 + 37}) {
    INFO("n = " << n);
    const std::vector<float> tanh_like = tanh(Tensor::from_vector(normal(n, 0.0f, 1.5f, uint64_t(n)))).to_vector();
    check_against_reference(tanh_like, 0.97f, {.bins = 40, .range = 1.0f});
    check_against_reference(normal(n, 0.0f, 1e-3f, uint64_t(n) + 1), 0.97f, {.bins = 40});
  }
}

TEST_CASE("describe keeps float32's precision at large and small magnitudes", "[diagnostics][tensor_stats]") {
  // A mean far from zero against the spread: the deviations are taken about the mean.
  check_against_reference(normal(1000, 1000.0f, 1e-2f, 3), 0.97f, {.bins = 10});
  // Squares of these would overflow or underflow in float; the values' own range is scaled.
  check_against_reference(normal(1000, 0.0f, 1e30f, 4), 0.97f, {.bins = 10});
  check_against_reference(normal(1000, 0.0f, 1e-30f, 5), 0.97f, {.bins = 10});
  // Sums that overflow float: the mean of the largest floats.
  std::vector<float> huge(300, 3e38f);
  huge[7] = -3e38f;
  check_against_reference(huge, 0.97f, {.bins = 4});
}

TEST_CASE("describe on equal values: the value, std 0, one bin around it", "[diagnostics][tensor_stats]") {
  const std::vector<float> tenths(4097, 0.1f);
  const TensorStats s = diagnostics::describe(Tensor::from_vector(tenths), 0.97f, {.bins = 3});
  CHECK(s.mean == double(0.1f));  // exactly, though 0.1f summed 4097 times is not 4097 * 0.1f
  CHECK(s.std == 0.0);
  CHECK(s.histogram.low == double(0.1f) - 0.5);
  REQUIRE(s.histogram.density.size() == 3);
  CHECK(s.histogram.density[0] == 0.0);
  CHECK(s.histogram.density[1] == Approx(3.0));  // all of them, in bins of width 1/3
  CHECK(s.histogram.density[2] == 0.0);
  const TensorStats one = diagnostics::describe(Tensor::from_vector({2.5f}), 0.97f, {.bins = 2});
  CHECK(one.mean == 2.5);
  CHECK(std::isnan(one.std));  // torch.std of one value
  CHECK(one.saturated == 1.0);
  check_against_reference({-3.0f, -3.0f, -3.0f}, 0.97f, {.bins = 2});
}

TEST_CASE("describe with NaN and inf: they poison mean and std, the histogram leaves them out",
          "[diagnostics][tensor_stats]") {
  for (const std::vector<float>& x : std::vector<std::vector<float>>{
           {1.0f, kNaN, 2.0f, 0.5f}, {1.0f, kInf, 3.0f}, {-kInf, 1.0f, 2.0f}, {kInf, -kInf}, {kNaN, kNaN}}) {
    INFO("values " << x[0] << " " << x[1] << " ...");
    const TensorStats s = diagnostics::describe(Tensor::from_vector(x), 0.97f, {.bins = 4});
    const Reference r = reference(x, 0.97f, {.bins = 4});
    CHECK(std::isnan(s.std));  // as torch.std with a NaN or an inf
    if (std::isnan(r.mean)) CHECK(std::isnan(s.mean));
    else CHECK(s.mean == r.mean);  // +-inf
    CHECK(s.saturated == Approx(r.saturated));
    CHECK(s.histogram.low == r.low);
    CHECK(s.histogram.high == r.high);
    CHECK(s.histogram.density == r.density);
  }
  // Among many finite values, in the middle of a block.
  std::vector<float> x = normal(1000, 0.0f, 0.5f, 8);
  x[300] = kNaN;
  x[301] = kInf;
  const TensorStats s = diagnostics::describe(Tensor::from_vector(x), 0.97f, {.bins = 40, .range = 1.0f});
  CHECK(std::isnan(s.mean));
  CHECK(s.histogram.density == reference(x, 0.97f, {.bins = 40, .range = 1.0f}).density);
}

TEST_CASE("histogram puts a value on an edge in the bin above it, exactly as the edges say",
          "[diagnostics][tensor_stats]") {
  // Every edge of 40 bins over [-1, 1] (and of 7 over the values' own range, edges that no
  // float holds), rounded to float, and the floats on either side of it.
  for (const HistogramOptions& options : {HistogramOptions{.bins = 40, .range = 1.0f}, HistogramOptions{.bins = 7}}) {
    std::vector<float> x{-0.3f, 0.7f};
    const double low = options.range > 0 ? -1.0 : -0.3f, high = options.range > 0 ? 1.0 : 0.7f;
    for (int64_t j = 0; j <= options.bins; ++j) {
      const float edge = float(low + double(j) * (high - low) / double(options.bins));
      for (float v : {std::nextafter(edge, -kInf), edge, std::nextafter(edge, kInf)})
        if (v >= float(low) && v <= float(high)) x.push_back(v);
    }
    x.push_back(-2.0f);  // beyond a fixed range: the end bins
    x.push_back(2.0f);
    if (options.range == 0.0f) x.resize(x.size() - 2);
    INFO("bins " << options.bins << ", " << x.size() << " values");
    check_against_reference(x, 0.5f, options);
  }
  // The worked case: 0.5 is the edge between the third and the fourth of 4 bins.
  const diagnostics::Histogram h = diagnostics::histogram(Tensor::from_vector({0.5f, 0.4999999f}), {4, 1.0f});
  CHECK(h.density == std::vector<double>{0.0, 0.0, 1.0, 1.0});
}

TEST_CASE("histogram: values at and beyond the end edges, beside the last inner edges, in every block",
          "[diagnostics][tensor_stats]") {
  // Saturated tanh outputs pile up at +-1, next to the range's ends: there a guess is in an
  // end bin either way, while a value beside the first or last inner edge must still be
  // settled against that edge. Blocks of 256 values with and without such values.
  for (const HistogramOptions& options : {HistogramOptions{.bins = 40, .range = 1.0f}, HistogramOptions{.bins = 40},
                                          HistogramOptions{.bins = 3}, HistogramOptions{.bins = 1 << 20}}) {
    std::vector<float> x = normal(3 * 256 + 5, 0.0f, 0.2f, 11);  // no value near an end
    const double low = options.range > 0 ? -1.0 : -0.999f, high = options.range > 0 ? 1.0 : 0.9999999f;
    const double width = (high - low) / double(options.bins);
    const std::vector<float> near_ends{-1.0f, -0.999f, std::nextafter(-1.0f, kInf), 0.9999999f, 1.0f, -1.5f, 1.5f};
    for (size_t i = 0; i < near_ends.size(); ++i) x[256 + 7 * i] = near_ends[i];
    for (const double edge : {low + width, high - width}) {
      const float e = float(edge);
      for (float v : {std::nextafter(e, -kInf), e, std::nextafter(e, kInf)}) x.push_back(v);
    }
    if (options.range == 0.0f)
      std::erase_if(x, [](float v) { return std::abs(v) >= 1.0f || v < -0.999f; }), x.push_back(-0.999f);
    INFO("bins " << options.bins << ", range " << options.range << ", " << x.size() << " values");
    check_against_reference(x, 0.97f, options);
  }
}

TEST_CASE("histogram refuses more bins than a float can count", "[diagnostics][tensor_stats]") {
  CHECK_THROWS_WITH(diagnostics::histogram(Tensor::ones({2}), {.bins = (int64_t(1) << 24) + 1}),
                    "histogram: expected at most 16777216 bins, got 16777217");
  CHECK_THROWS_WITH(diagnostics::describe(Tensor::ones({2}), 0.97f, {.bins = -1}),
                    "histogram: expected at least 1 bin, got -1");
}

}  // namespace test_tensor_stats
