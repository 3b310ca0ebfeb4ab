// The row norms' kernels (src/kernels/norm/row_norm.cpp) against a plain double reference,
// value by value within bounds from float32's rounding. The forward: blocks of up to 4
// groups of 8 rows, each moment pass over a group's rows together, the rows' scalar steps
// in one float vector, a flat normalize loop for LayerNorm and RMSNorm. The backward: a
// group's rows summed together, LayerNorm and RMSNorm's dx sweep adding the group's weight
// and bias terms in float before the chunk's double partials. Row counts around a group, a
// 32-row chunk and a block, widths around the 8- and 16-value vector steps and the sweep's
// 64-column spans, a large mean against a small spread, every affine combination, RMSNorm
// and GroupNorm.
#include <cmath>

#include "support/check.hpp"
#include "support/norm_reference.hpp"

namespace test_norm_row_bounds {

using namespace minidl;
using minidl::testing::random_normal;

namespace {

constexpr double kUnit = 0x1p-24;  // float32's unit roundoff u

// A row's exact mean (0 when not centered), mean|x - x[0]| (the spread the shifted sum sees)
// and rstd.
struct RowMoments {
  double mean = 0.0, spread = 0.0, rstd = 0.0;
};
RowMoments row_reference(const float* xr, int64_t n, bool centered, double eps) {
  RowMoments m;
  if (centered) {
    for (int64_t j = 0; j < n; ++j) m.mean += xr[j];
    m.mean /= double(n);
    for (int64_t j = 0; j < n; ++j) m.spread += std::abs(double(xr[j]) - xr[0]) / double(n);
  }
  double squares = 0.0;
  for (int64_t j = 0; j < n; ++j) squares += (xr[j] - m.mean) * (xr[j] - m.mean);
  m.rstd = 1.0 / std::sqrt(squares / double(n) + eps);
  return m;
}

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
    const auto [mean, spread, rstd] = row_reference(xr, c.n, c.centered, c.eps);
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

struct Grads {
  Tensor dx, dweight, dbias;
};

Grads run(const Tensor& x, const Tensor& dy, const Tensor& weight, bool centered) {
  const int64_t n = x.size(1);
  Tensor leaf = x.clone().detach().requires_grad_(true);
  Tensor w = weight.defined() ? weight.clone().detach().requires_grad_(true) : Tensor();
  Tensor b = centered ? Tensor::zeros({n}).requires_grad_(true) : Tensor();
  Tensor out = centered ? layer_norm(leaf, {n}, w, b) : rms_norm(leaf, {n}, w, 1e-5);
  out.backward(dy);
  return {leaf.grad(), w.defined() ? w.grad() : Tensor(), b.defined() ? b.grad() : Tensor()};
}

int64_t failures = 0;
void expect_within(double got, double expected, double bound, const char* what, int64_t r, int64_t j) {
  if (std::abs(got - expected) <= bound) return;
  if (failures++ < 3)
    FAIL_CHECK(what << " row " << r << " value " << j << ": " << got << " against " << expected << ", off by "
                    << std::abs(got - expected) << ", bound " << bound);
}

// Checks the gradients of x (rows, n) for dy against double. With a = n / 16 + 5 (the most
// float additions a term of a row's sum rounds through), the forward's bound on xhat
// (check_rows), E = u ((a + 10) |xhat| + (a + 2) mean|x - x[0]| rstd), and
// g = dy w:
//   mean(g) within (a + 2) u mean|g|, mean(g xhat) within (a + 3) u mean|g xhat| + mean(|g| E),
//   rstd within (a / 2 + 3) u, and dx = rstd (g - mean(g) - xhat mean(g xhat)) adds 4 roundings;
//   dweight = sum over rows of dy xhat within sum(8 u |dy xhat| + |dy| E) + u |dweight|
//   (8 float terms a group, then double), dbias = sum of dy within 8 u sum|dy|.
void check_backward(const Tensor& x, const Tensor& dy, const Tensor& weight, bool centered) {
  const int64_t rows = x.size(0), n = x.size(1);
  const double a = double(n) / 16.0 + 5.0, eps = 1e-5;
  const Grads got = run(x, dy, weight, centered);
  const size_t cols = size_t(n);
  std::vector<double> dw(cols, 0.0), dw_bound(cols, 0.0), db(cols, 0.0), db_bound(cols, 0.0);
  failures = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * n;
    const float* dyr = dy.data() + r * n;
    const auto [mean, spread, rstd] = row_reference(xr, n, centered, eps);
    std::vector<double> xhat(cols, 0.0), g(cols, 0.0), err(cols, 0.0);
    double mg = 0.0, mgx = 0.0, abs_g = 0.0, abs_gx = 0.0, g_err = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      const size_t i = size_t(j);
      xhat[i] = (xr[j] - mean) * rstd;
      err[i] = kUnit * ((a + 10.0) * std::abs(xhat[i]) + (a + 2.0) * spread * rstd);
      g[i] = double(dyr[j]) * (weight.defined() ? weight.data()[j] : 1.0);
      mg += g[i] / double(n);
      mgx += g[i] * xhat[i] / double(n);
      abs_g += std::abs(g[i]) / double(n);
      abs_gx += std::abs(g[i] * xhat[i]) / double(n);
      g_err += std::abs(g[i]) * err[i] / double(n);
    }
    if (!centered) mg = abs_g = 0.0;
    const double mg_bound = (a + 2.0) * kUnit * abs_g, mgx_bound = (a + 3.0) * kUnit * abs_gx + g_err;
    for (int64_t j = 0; j < n; ++j) {
      const size_t i = size_t(j);
      const double inner = g[i] - mg - xhat[i] * mgx;
      const double bound = rstd * ((a / 2.0 + 3.0) * kUnit * std::abs(inner) + kUnit * std::abs(g[i]) + mg_bound +
                                   std::abs(xhat[i]) * mgx_bound + err[i] * std::abs(mgx) +
                                   4.0 * kUnit * (std::abs(g[i]) + std::abs(mg) + std::abs(xhat[i] * mgx)));
      expect_within(got.dx.data()[r * n + j], rstd * inner, bound, "dx", r, j);
      dw[i] += dyr[j] * xhat[i];
      dw_bound[i] += 8.0 * kUnit * std::abs(dyr[j] * xhat[i]) + std::abs(dyr[j]) * err[i];
      db[i] += dyr[j];
      db_bound[i] += 8.0 * kUnit * std::abs(dyr[j]);
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    const size_t i = size_t(j);
    if (got.dweight.defined())
      expect_within(got.dweight.data()[j], dw[i], dw_bound[i] + kUnit * std::abs(dw[i]), "dweight", -1, j);
    if (got.dbias.defined())
      expect_within(got.dbias.data()[j], db[i], db_bound[i] + kUnit * std::abs(db[i]), "dbias", -1, j);
  }
  CHECK(failures == 0);
}

constexpr int64_t kRows[] = {1, 3, 4, 7, 8, 9, 15, 31, 32, 33, 70};
constexpr int64_t kWidths[] = {1, 7, 8, 15, 16, 17, 63, 64, 65, 130};

// f(rows, width, seed) for every row count and width above.
template <typename F>
void for_each_shape(F f) {
  for (int64_t width : kWidths)
    for (int64_t rows : kRows) {
      INFO("x (" << rows << ", " << width << ")");
      f(rows, width, uint64_t(1000 * width + rows));
    }
}

}  // namespace

TEST_CASE("LayerNorm and RMSNorm forwards match double on odd row counts and widths", "[norm][row_bounds]") {
  for_each_shape([](int64_t rows, int64_t width, uint64_t seed) {
    const Tensor x = random_normal({rows, width}, seed, 0.5f, 2.0f);
    const Tensor weight = random_normal({width}, seed + 1, 1.0f, 0.5f);
    const Tensor bias = random_normal({width}, seed + 2);
    check_rows(layer_norm(x, {width}, weight, bias), {x, width, true, 1e-5, weight, bias});
    check_rows(rms_norm(x, {width}, weight), {x, width, false, std::numeric_limits<float>::epsilon(), weight, {}});
  });
}

TEST_CASE("LayerNorm's forward keeps a mean of 1e4 against a spread of 1e-2 to float32's bound", "[norm][row_bounds]") {
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

TEST_CASE("LayerNorm's forward with no affine, weight only and bias only matches double", "[norm][row_bounds]") {
  const int64_t rows = 19, width = 40;
  const Tensor x = random_normal({rows, width}, 50, -1.0f, 3.0f);
  const Tensor weight = random_normal({width}, 51, 1.0f, 0.5f), bias = random_normal({width}, 52);
  check_rows(layer_norm(x, {width}, Tensor(), Tensor()), {x, width, true, 1e-5, Tensor(), Tensor()});
  check_rows(layer_norm(x, {width}, weight, Tensor()), {x, width, true, 1e-5, weight, Tensor()});
  check_rows(layer_norm(x, {width}, Tensor(), bias), {x, width, true, 1e-5, Tensor(), bias});
  check_rows(layer_norm(x, {width}, weight, bias, 0.5), {x, width, true, 0.5, weight, bias});
  check_rows(rms_norm(x, {width}, Tensor(), 1e-3), {x, width, false, 1e-3, Tensor(), Tensor()});
}

TEST_CASE("LayerNorm over two trailing dims and GroupNorm's forwards match double", "[norm][row_bounds]") {
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

TEST_CASE("LayerNorm and RMSNorm backwards match double on odd row counts and widths", "[norm][row_bounds]") {
  for_each_shape([](int64_t rows, int64_t width, uint64_t seed) {
    const Tensor x = random_normal({rows, width}, seed + 3, 0.5f, 2.0f);
    const Tensor dy = random_normal({rows, width}, seed + 4);
    const Tensor weight = random_normal({width}, seed + 5, 1.0f, 0.5f);
    for (bool centered : {true, false}) {
      INFO((centered ? "LayerNorm" : "RMSNorm"));
      check_backward(x, dy, weight, centered);
      check_backward(x, dy, Tensor(), centered);
    }
  });
}

TEST_CASE("LayerNorm's backward keeps a mean of 1e4 against a spread of 1e-2 to float32's bound",
          "[norm][row_bounds]") {
  for (int64_t width : {64, 65, 130}) {
    INFO("width " << width);
    const Tensor x = random_normal({70, width}, 80 + uint64_t(width), 1e4f, 1e-2f);
    const Tensor dy = random_normal({70, width}, 81);
    check_backward(x, dy, random_normal({width}, 82, 1.0f, 0.5f), true);
  }
}

}  // namespace test_norm_row_bounds
