// sum/mean/var/max/argmax over sets of axes with keepdim: values, gradients, errors.
#include <cmath>

#include "support/check.hpp"

namespace test_ops_reduce {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

namespace {

// x[i][j][k] = 100 i + 10 j + k over (2, 3, 4): every partial sum is easy to work by hand.
Tensor cube() {
  Tensor x = Tensor::empty({2, 3, 4});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) x.set({i, j, k}, float(100 * i + 10 * j + k));
  return x;
}

}  // namespace

TEST_CASE("sum over axes sets with and without keepdim", "[ops]") {
  Tensor x = cube();
  Tensor all = sum(x);
  CHECK(all.dim() == 0);
  CHECK(all.item() == 1476);  // 100 * 12 + 10 * (0 + 1 + 2) * 8 + (0 + 1 + 2 + 3) * 6
  CHECK(sum(x, {0}).shape() == Shape{3, 4});
  check_close(sum(x, {0}), {100, 102, 104, 106, 120, 122, 124, 126, 140, 142, 144, 146}, 0, 0);
  Tensor s1 = sum(x, {1}, true);
  CHECK(s1.shape() == Shape{2, 1, 4});
  check_close(s1, {30, 33, 36, 39, 330, 333, 336, 339}, 0, 0);
  check_close(sum(x, {-1}), {6, 46, 86, 406, 446, 486}, 0, 0);
  Tensor s02 = sum(x, {0, 2}, true);
  CHECK(s02.shape() == Shape{1, 3, 1});
  check_close(s02, {412, 492, 572}, 0, 0);
  check_close(sum(x, {2, 0}), {412, 492, 572}, 0, 0);
  CHECK(sum(x, {0, 1, 2}, true).shape() == Shape{1, 1, 1});
  CHECK(sum(x, {}, true).shape() == Shape{1, 1, 1});
  Tensor sc = sum(Tensor::scalar(5.0f), {0});
  CHECK(sc.dim() == 0);
  CHECK(sc.item() == 5.0f);
  CHECK(sum(Tensor::zeros({0, 3}), {0}).to_vector() == std::vector<float>{0, 0, 0});
}

TEST_CASE("mean over axes sets", "[ops]") {
  Tensor x = cube();
  CHECK(mean(x).item() == Approx(1476.0 / 24));
  check_close(mean(x, {1, 2}), {11.5f, 111.5f}, 0, 0);
  check_close(mean(x, {0}, true), {50, 51, 52, 53, 60, 61, 62, 63, 70, 71, 72, 73}, 0, 0);
  CHECK(mean(x, {0}, true).shape() == Shape{1, 3, 4});
  CHECK(std::isnan(mean(Tensor::zeros({0})).item()));
}

TEST_CASE("var with correction 0 and 1", "[ops]") {
  Tensor x = Tensor::from_vector({1, 2, 3, 4, 10, 20, 30, 40}, {2, 4});
  check_close(var(x, {1}, 0), {1.25f, 125}, 0, 1e-6);
  check_close(var(x, {1}, 1), {5.0f / 3, 500.0f / 3}, 0, 1e-6);
  check_close(var(x, {0}, 0), {20.25f, 81, 182.25f, 324}, 0, 1e-6);
  check_close(var(x, {0}, 1), {40.5f, 162, 364.5f, 648}, 0, 1e-6);
  Tensor keep = var(x, {1}, 1, true);
  CHECK(keep.shape() == Shape{2, 1});
  // All 8: mean 13.75, sum of squared deviations 1517.5.
  CHECK(var(x).item() == Approx(1517.5 / 7));
  CHECK(var(x, {}, 0).item() == Approx(1517.5 / 8));
  CHECK(var(cube(), {0, 2}, 0).to_vector() == std::vector<float>{2501.25f, 2501.25f, 2501.25f});
  // A single element with correction 1: 0 / 0.
  CHECK(std::isnan(var(Tensor::from_vector({3}), {0}, 1).item()));
}

TEST_CASE("var is two-pass: a large mean with a small spread", "[ops]") {
  // mean 1e4, std 0.1: E[x^2] - E[x]^2 in float32 loses everything here.
  Generator gen(12);
  Tensor x = Tensor::randn({1000}, gen, 1e4f, 0.1f);
  double m = 0;
  for (float v : x.to_vector()) m += v;
  m /= 1000;
  double ss = 0;
  for (float v : x.to_vector()) ss += (v - m) * (v - m);
  CHECK(var(x, {0}, 0).item() == Approx(ss / 1000).epsilon(1e-3));
  CHECK(var(x, {0}, 1).item() == Approx(ss / 999).epsilon(1e-3));
}

TEST_CASE("var centres exactly: mean 1e4, std 1e-2, within 1e-6 of double", "[ops]") {
  // The deviations are 1e-6 of the mean: centring on the mean rounded to float (half an
  // ulp of 1e4 is 4.9e-4) puts var 1e-3 off; PyTorch float32 is 3e-8 off here.
  Generator gen(5);
  Tensor x = Tensor::randn({4, 64}, gen, 1e4f, 1e-2f);
  for (int64_t correction : {0, 1}) {
    Tensor v = var(x, {1}, correction);
    for (int64_t r = 0; r < 4; ++r) {
      const float* row = x.data() + r * 64;
      double m = 0, ss = 0;
      for (int64_t j = 0; j < 64; ++j) m += row[j];
      m /= 64;
      for (int64_t j = 0; j < 64; ++j) ss += (row[j] - m) * (row[j] - m);
      const double expected = ss / double(64 - correction);
      INFO("row " << r << " correction " << correction);
      CHECK(std::abs(v.data()[r] - expected) <= 1e-6 * expected);
    }
  }
}

TEST_CASE("max and argmax along a dim and over everything", "[ops]") {
  Tensor x = Tensor::from_vector({3, 7, 7, 1, 9, 2, -4, -1, -8}, {3, 3});
  check_close(max(x, 1), {7, 9, -1}, 0, 0);
  check_close(max(x, 0), {3, 9, 7}, 0, 0);
  check_close(max(x, -1, true), {7, 9, -1}, 0, 0);
  CHECK(max(x, -1, true).shape() == Shape{3, 1});
  check_close(argmax(x, 1), {1, 1, 1}, 0, 0);  // the first of the tied 7s
  check_close(argmax(x, 0), {0, 1, 0}, 0, 0);
  CHECK(argmax(x, 0, true).shape() == Shape{1, 3});
  CHECK(max(x).item() == 9.0f);
  CHECK(max(x).dim() == 0);
  Tensor c = cube();
  check_close(max(c, 1), {20, 21, 22, 23, 120, 121, 122, 123}, 0, 0);
  check_close(argmax(c, 2), {3, 3, 3, 3, 3, 3}, 0, 0);
  Tensor with_nan = Tensor::from_vector({1, NAN, 5});
  CHECK(std::isnan(max(with_nan).item()));
  CHECK(argmax(with_nan, 0).item() == 1.0f);
  REQUIRE_THROWS_WITH(max(Tensor::zeros({0})), Contains("expected a non-empty tensor, got shape [0]"));
  REQUIRE_THROWS_WITH(max(Tensor::zeros({2, 0}), 1), Contains("cannot reduce an empty dimension of shape [2, 0]"));
}

TEST_CASE("bad dims name the valid range", "[ops]") {
  Tensor x = Tensor::zeros({2, 3});
  REQUIRE_THROWS_WITH(sum(x, {2}), Contains("dimension out of range (expected to be in range of [-2, 1], but got 2)"));
  REQUIRE_THROWS_WITH(mean(x, {-3}), Contains("but got -3"));
  REQUIRE_THROWS_WITH(var(x, {5}), Contains("but got 5"));
  REQUIRE_THROWS_WITH(max(x, 2), Contains("but got 2"));
  REQUIRE_THROWS_WITH(argmax(x, -3), Contains("but got -3"));
  REQUIRE_THROWS_WITH(log_softmax(x, 2), Contains("but got 2"));
  REQUIRE_THROWS_WITH(sum(x, {1, -1}), Contains("dim 1 appears multiple times in the list of dims [1, -1]"));
  REQUIRE_THROWS_WITH(sum(Tensor::scalar(1.0f), {1}), Contains("expected to be in range of [-1, 0], but got 1"));
  // A scalar's dims 0 and -1 are the same dim, as in PyTorch.
  REQUIRE_THROWS_WITH(sum(Tensor::scalar(2.5f), {0, -1}), Contains("dim 0 appears multiple times in the list of dims"));
  REQUIRE_THROWS_WITH(mean(Tensor::scalar(2.5f), {0, 0}), Contains("dim 0 appears multiple times in the list of dims"));
  REQUIRE_THROWS_WITH(var(Tensor::scalar(2.5f), {-1, 0}), Contains("dim 0 appears multiple times in the list of dims"));
  REQUIRE_THROWS_WITH(var(x, {0, 1, -2}), Contains("dim 0 appears multiple times in the list of dims"));
  CHECK(sum(Tensor::scalar(2.5f), {-1}).item() == 2.5f);
}

TEST_CASE("var where n <= correction: values and gradients as PyTorch 2.x", "[ops][autograd]") {
  // var divides by max(0, n - correction): 0 / 0 is NaN, a positive sum over 0 is inf. The
  // gradient is 2 (x - mean) / (n - correction) with the undivided n - correction, except for
  // a full reduction (of a scalar, or over every dim) with n <= correction: grad * inf, NaN
  // where x equals the mean (PyTorch 2.x's var_backward; 1.13 gave inf for one element).
  auto value_and_grad = [](Tensor x, const Axes& axes, int64_t correction, float g = 1.0f) {
    x.requires_grad_(true);
    Tensor v = var(x, axes, correction);
    v.backward(Tensor::full(v.shape(), g));
    return std::pair{v.to_vector(), x.grad().to_vector()};
  };
  auto [v0, g0] = value_and_grad(Tensor::scalar(2), {}, 0);
  CHECK(v0[0] == 0.0f);
  CHECK(g0[0] == 0.0f);
  // One element, unbiased: the value and the gradient are NaN, whatever the incoming gradient.
  for (const Tensor& one : {Tensor::scalar(2), Tensor::from_vector({2}), Tensor::from_vector({2}, {1, 1})})
    for (float g : {1.0f, -3.0f}) {
      INFO("shape " << to_string(one.shape()) << ", incoming gradient " << g);
      auto [v, grad] = value_and_grad(one.clone(), {}, 1, g);
      CHECK(std::isnan(v[0]));
      CHECK(std::isnan(grad[0]));
    }
  auto [v2, g2] = value_and_grad(Tensor::scalar(2), {}, 2);
  CHECK(std::isnan(v2[0]));
  CHECK(std::isnan(g2[0]));
  auto [vd, gd] = value_and_grad(Tensor::scalar(2), {0}, 1);
  CHECK(std::isnan(gd[0]));
  auto [va, ga] = value_and_grad(Tensor::from_vector({1, 2, 3, 5}, {2, 2}), {}, 4);
  CHECK(va[0] == INFINITY);
  CHECK(ga == std::vector<float>(4, INFINITY));
  auto [vm, gm] = value_and_grad(Tensor::from_vector({1, 2, 3}), {}, 4, -1.0f);  // 2 is the mean
  CHECK(vm[0] == INFINITY);
  CHECK(gm[0] == -INFINITY);
  CHECK(std::isnan(gm[1]));
  CHECK(gm[2] == -INFINITY);
  // Explicit dims of a non-scalar: 2 / (n - correction) times the deviations.
  auto [ve, ge] = value_and_grad(Tensor::from_vector({2}), {0}, 1);
  CHECK(std::isnan(ve[0]));
  CHECK(std::isnan(ge[0]));  // inf * 0
  auto [vf, gf] = value_and_grad(Tensor::from_vector({2, 3}), {0}, 2);
  CHECK(vf[0] == INFINITY);
  CHECK(gf == std::vector<float>{-INFINITY, INFINITY});
  auto [vg, gg] = value_and_grad(Tensor::from_vector({2, 3}), {0}, 3);
  CHECK(vg[0] == INFINITY);
  CHECK(gg == std::vector<float>{1, -1});                              // 2 / -1 * (-0.5, 0.5)
  auto [vh, gh] = value_and_grad(Tensor::from_vector({2, 3}), {}, 3);  // the same, reducing every dim
  CHECK(vh[0] == INFINITY);
  CHECK(gh == std::vector<float>{INFINITY, INFINITY});
}

TEST_CASE("gradients of reductions by finite differences", "[ops][autograd]") {
  Generator gen(13);
  using Inputs = const std::vector<Tensor>&;
  const std::vector<std::pair<Axes, bool>> cases = {{{}, false},    {{0}, false},    {{1}, true},      {{-1}, false},
                                                    {{0, 2}, true}, {{2, 0}, false}, {{0, 1, 2}, true}};
  for (const auto& [axes, keepdim] : cases) {
    INFO("axes " << to_string(axes) << " keepdim " << keepdim);
    check_gradients([&](Inputs in) { return sum(in[0], axes, keepdim); }, {Tensor::randn({2, 3, 4}, gen)});
    check_gradients([&](Inputs in) { return mean(in[0], axes, keepdim); }, {Tensor::randn({2, 3, 4}, gen)});
    for (int64_t correction : {0, 1})
      check_gradients([&](Inputs in) { return var(in[0], axes, correction, keepdim); },
                      {Tensor::randn({2, 3, 4}, gen)});
  }
  // max: distinct values far apart, so a step of eps never changes the winner.
  auto spread = [&](const Shape& s) {  // 0, 0.5, 1, ... in a random order
    std::vector<float> values(size_t(numel(s)));
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * float(i);
    for (size_t i = values.size(); i-- > 1;) std::swap(values[i], values[gen.below(i + 1)]);
    return Tensor::from_vector(values, s);
  };
  for (int64_t dim : {0, 1, 2})
    for (bool keepdim : {false, true})
      check_gradients([&](Inputs in) { return max(in[0], dim, keepdim); }, {spread({2, 3, 4})});
  check_gradients([](Inputs in) { return max(in[0]); }, {spread({3, 4})});
}

TEST_CASE("max sends the gradient to the first maximum, max() shares it between ties", "[ops][autograd]") {
  Tensor x = Tensor::from_vector({1, 5, 5, 2}, {1, 4}).requires_grad_();
  sum(max(x, 1)).backward();
  check_close(x.grad(), {0, 1, 0, 0}, 0, 0);
  Tensor y = Tensor::from_vector({5, 1, 5, 5}).requires_grad_();
  (max(y) * 6.0f).backward();
  check_close(y.grad(), {2, 0, 2, 2}, 0, 0);
}

}  // namespace test_ops_reduce
