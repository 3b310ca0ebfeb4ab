// The row norms' forward (src/kernels/norm/row_norm.cpp: blocks of up to 4 groups of 8
// rows, each moment pass over a group's rows together, the rows' scalar steps in one float
// vector, a flat normalize loop for LayerNorm and RMSNorm) against a plain double reference,
// value by value within a bound from float32's rounding: row counts around a group and a
// block, widths around the 8- and 16-value vector steps, a large mean against a small
// spread, every affine combination, RMSNorm and GroupNorm.
#include <cmath>

#include "support/check.hpp"
#include "support/norm_reference.hpp"

using namespace minidl;
using minidl::testing::random_normal;

namespace {

constexpr double kUnit = 0x1p-24;  // float32's unit roundoff u

struct RowCase {
  const Tensor& x;  // (rows, n) values, row after row
  int64_t n;
  bool centered;
  double eps;
  const Tensor& weight;  // or undefined
  const Tensor& bias;    // or undefined
  // The affine entry of value j of row r.
  std::function<int64_t(int64_t r, int64_t j)> affine_at = [](int64_t, int64_t j) { return j; };
};

// Checks out against the rows normalized in double. The bound follows the kernel's rounding
// (row_norm.cpp's comment): a float sum of n values rounds each term through at most
// a = n / 16 + 5 additions; rstd carries a u / 2 from the squares' sum and 3u from its scalar
// steps; the normalized value 3 more roundings and the mean's error, at most (a + 1) u
// mean|x - x[0]|, times rstd; the affine step 2 more roundings. Rounded up:
//   |out - exact| <= u (|w| ((a + 10) |xhat| + (a + 2) mean|x - x[0]| rstd) + 2 |b|).
void check_rows(const Tensor& out, const RowCase& c) {
  const int64_t rows = c.x.numel() / c.n;
  const double a = double(c.n) / 16.0 + 5.0;
  const float* x = c.x.data();
  int64_t failures = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c.n;
    double mean = 0.0, spread = 0.0, squares = 0.0;  // spread: mean|x - x[0]|
    if (c.centered) {
      for (int64_t j = 0; j < c.n; ++j) mean += xr[j];
      mean /= double(c.n);
      for (int64_t j = 0; j < c.n; ++j) spread += std::abs(double(xr[j]) - xr[0]) / double(c.n);
    }
    for (int64_t j = 0; j < c.n; ++j) squares += (xr[j] - mean) * (xr[j] - mean);
    const double rstd = 1.0 / std::sqrt(squares / double(c.n) + c.eps);
    for (int64_t j = 0; j < c.n; ++j) {
      const int64_t e = c.affine_at(r, j);
      const double w = c.weight.defined() ? c.weight.data()[e] : 1.0, b = c.bias.defined() ? c.bias.data()[e] : 0.0;
      const double xhat = (xr[j] - mean) * rstd, expected = xhat * w + b;
      const double bound =
          kUnit * (std::abs(w) * ((a + 10.0) * std::abs(xhat) + (a + 2.0) * spread * rstd) + 2.0 * std::abs(b));
      const double got = out.data()[r * c.n + j];
      if (!(std::abs(got - expected) <= bound) && failures++ < 3)
        FAIL_CHECK("row " << r << " value " << j << ": " << got << " against " << expected << ", off by "
                          << std::abs(got - expected) << ", bound " << bound);
    }
  }
  CHECK(failures == 0);
}

constexpr int64_t kRows[] = {1, 3, 4, 7, 8, 9, 15, 31, 32, 33, 70};
constexpr int64_t kWidths[] = {1, 7, 8, 15, 16, 17, 63, 64, 65, 130};

}  // namespace

TEST_CASE("LayerNorm and RMSNorm forwards match double on odd row counts and widths", "[norm][row_forward]") {
  for (int64_t width : kWidths) {
    for (int64_t rows : kRows) {
      INFO("x (" << rows << ", " << width << ")");
      const uint64_t seed = uint64_t(1000 * width + rows);
      const Tensor x = random_normal({rows, width}, seed, 0.5f, 2.0f);
      const Tensor weight = random_normal({width}, seed + 1, 1.0f, 0.5f);
      const Tensor bias = random_normal({width}, seed + 2);
      check_rows(layer_norm(x, {width}, weight, bias), {x, width, true, 1e-5, weight, bias});
      check_rows(rms_norm(x, {width}, weight), {x, width, false, std::numeric_limits<float>::epsilon(), weight, {}});
    }
  }
}

TEST_CASE("LayerNorm's forward keeps a mean of 1e4 against a spread of 1e-2 to float32's bound",
          "[norm][row_forward]") {
  // Summed without the shift by each row's first value, 64 values of 1e4 lose about
  // 7 u 1e4 = 4e-3 of their mean in float: 0.4 of the spread, far past the bound.
  for (int64_t width : {64, 65, 130, 3000}) {
    INFO("width " << width);
    const Tensor x = random_normal({33, width}, 40 + uint64_t(width), 1e4f, 1e-2f);
    const Tensor weight = random_normal({width}, 41, 1.0f, 0.5f), bias = random_normal({width}, 42);
    check_rows(layer_norm(x, {width}, weight, bias), {x, width, true, 1e-5, weight, bias});
    check_rows(layer_norm(x, {width}, Tensor(), Tensor()), {x, width, true, 1e-5, Tensor(), Tensor()});
  }
}

TEST_CASE("LayerNorm's forward with no affine, weight only and bias only matches double", "[norm][row_forward]") {
  const int64_t rows = 19, width = 40;
  const Tensor x = random_normal({rows, width}, 50, -1.0f, 3.0f);
  const Tensor weight = random_normal({width}, 51, 1.0f, 0.5f), bias = random_normal({width}, 52);
  check_rows(layer_norm(x, {width}, Tensor(), Tensor()), {x, width, true, 1e-5, Tensor(), Tensor()});
  check_rows(layer_norm(x, {width}, weight, Tensor()), {x, width, true, 1e-5, weight, Tensor()});
  check_rows(layer_norm(x, {width}, Tensor(), bias), {x, width, true, 1e-5, Tensor(), bias});
  check_rows(layer_norm(x, {width}, weight, bias, 0.5), {x, width, true, 0.5, weight, bias});
  check_rows(rms_norm(x, {width}, Tensor(), 1e-3), {x, width, false, 1e-3, Tensor(), Tensor()});
}

TEST_CASE("LayerNorm over two trailing dims and GroupNorm's forwards match double", "[norm][row_forward]") {
  {
    const Tensor x = random_normal({11, 3, 7}, 60, 2.0f, 0.5f);
    const Tensor weight = random_normal({3, 7}, 61), bias = random_normal({3, 7}, 62);
    check_rows(layer_norm(x, {3, 7}, weight, bias), {x, 21, true, 1e-5, weight, bias});
  }
  // GroupNorm (N, C, L), G groups: row r = (item, group) holds C / G channels of L values.
  for (const Shape& shape : {Shape{5, 6, 9}, Shape{64, 64}, Shape{3, 8, 130}}) {
    INFO("GroupNorm x " << to_string(shape));
    const int64_t groups = shape[1] == 6 ? 3 : 8, channels = shape[1] / groups;
    const int64_t inner = shape.size() > 2 ? shape[2] : 1, n = channels * inner;
    const Tensor x = random_normal(shape, 70 + uint64_t(shape[1]), 1e3f, 0.1f);
    const Tensor weight = random_normal({shape[1]}, 71), bias = random_normal({shape[1]}, 72);
    RowCase c{x, n, true, 1e-5, weight, bias};
    c.affine_at = [&](int64_t r, int64_t j) { return (r % groups) * channels + j / inner; };
    check_rows(group_norm(x, groups, weight, bias), c);
  }
}
