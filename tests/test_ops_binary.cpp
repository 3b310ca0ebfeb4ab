// add/sub/mul/div with broadcasting: values, gradients, shape errors.
#include "support/check.hpp"

namespace test_ops_binary {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

namespace {
Tensor t(const std::vector<float>& v, const Shape& s) { return Tensor::from_vector(v, s); }
}  // namespace

TEST_CASE("elementwise ops on equal shapes", "[ops]") {
  Tensor a = t({1, 2, 3, 4}, {2, 2});
  Tensor b = t({5, -6, 0.5f, 8}, {2, 2});
  check_close(add(a, b), {6, -4, 3.5f, 12}, 0, 0);
  check_close(sub(a, b), {-4, 8, 2.5f, -4}, 0, 0);
  check_close(mul(a, b), {5, -12, 1.5f, 32}, 0, 0);
  check_close(div(a, b), {0.2f, -1.0f / 3.0f, 6, 0.5f}, 0, 1e-7);
  check_close(a + b, add(a, b), 0, 0);
  check_close(a - b, sub(a, b), 0, 0);
  check_close(a * b, mul(a, b), 0, 0);
  check_close(a / b, div(a, b), 0, 0);
}

TEST_CASE("broadcasting: bias row against a batch", "[ops]") {
  Tensor x = t({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor bias = t({10, 20, 30}, {3});
  Tensor y = add(x, bias);
  CHECK(y.shape() == Shape{2, 3});
  check_close(y, {11, 22, 33, 14, 25, 36}, 0, 0);
  check_close(add(bias, x), {11, 22, 33, 14, 25, 36}, 0, 0);
  check_close(sub(bias, x), {9, 18, 27, 6, 15, 24}, 0, 0);
}

TEST_CASE("broadcasting: (N, 1) against (1, C) gives (N, C)", "[ops]") {
  Tensor col = t({1, 2}, {2, 1});
  Tensor row = t({10, 20, 30}, {1, 3});
  Tensor y = mul(col, row);
  CHECK(y.shape() == Shape{2, 3});
  check_close(y, {10, 20, 30, 20, 40, 60}, 0, 0);
  check_close(sub(col, row), {-9, -19, -29, -8, -18, -28}, 0, 0);
}

TEST_CASE("broadcasting: keepdim reductions against their source", "[ops]") {
  Tensor x = t({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor row_means = mean(x, {1}, true);  // (2, 1): 2, 5
  check_close(sub(x, row_means), {-1, 0, 1, -1, 0, 1}, 0, 0);
  Tensor col_sums = sum(x, {0}, true);  // (1, 3): 5, 7, 9
  check_close(div(x, col_sums), {0.2f, 2.0f / 7, 1.0f / 3, 0.8f, 5.0f / 7, 2.0f / 3}, 0, 1e-6);
  // 3-D: (2, 3, 4) against (2, 1, 4) and (1, 3, 1)
  Generator gen(0);
  Tensor a = Tensor::randn({2, 3, 4}, gen);
  Tensor m = mean(a, {1}, true);
  Tensor c = sub(a, m);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) CHECK(c.at({i, j, k}) == a.at({i, j, k}) - m.at({i, 0, k}));
  Tensor s = sum(a, {0, 2}, true);
  Tensor d = add(a, s);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) CHECK(d.at({i, j, k}) == a.at({i, j, k}) + s.at({0, j, 0}));
}

TEST_CASE("broadcasting with scalars and floats", "[ops]") {
  Tensor x = t({1, 2, 4}, {3});
  check_close(x * 2.0f, {2, 4, 8}, 0, 0);
  check_close(2.0f * x, {2, 4, 8}, 0, 0);
  check_close(x + 1.0f, {2, 3, 5}, 0, 0);
  check_close(1.0f + x, {2, 3, 5}, 0, 0);
  check_close(x - 1.0f, {0, 1, 3}, 0, 0);
  check_close(1.0f - x, {0, -1, -3}, 0, 0);
  check_close(x / 2.0f, {0.5f, 1, 2}, 0, 0);
  check_close(8.0f / x, {8, 4, 2}, 0, 0);
  Tensor s = add(Tensor::scalar(2.0f), Tensor::scalar(3.0f));
  CHECK(s.dim() == 0);
  CHECK(s.item() == 5.0f);
  CHECK(add(Tensor::scalar(1.0f), Tensor::ones({1, 1})).shape() == Shape{1, 1});
  CHECK(add(Tensor::zeros({0, 3}), Tensor::ones({3})).shape() == Shape{0, 3});
}

TEST_CASE("mismatched shapes name both shapes", "[ops]") {
  Tensor a = Tensor::zeros({2, 3});
  Tensor b = Tensor::zeros({4});
  REQUIRE_THROWS_WITH(add(a, b), Contains("add: shapes [2, 3] and [4] cannot be broadcast together"));
  REQUIRE_THROWS_WITH(sub(a, b), Contains("sub: shapes [2, 3] and [4]"));
  REQUIRE_THROWS_WITH(mul(b, a), Contains("mul: shapes [4] and [2, 3]"));
  REQUIRE_THROWS_WITH(div(a, Tensor::zeros({3, 3})), Contains("div: shapes [2, 3] and [3, 3]"));
  REQUIRE_THROWS_WITH(broadcast_shapes({2, 3}, {3, 3}),
                      Contains("shapes [2, 3] and [3, 3] cannot be broadcast together (dimension 0: 2 vs 3)"));
}

TEST_CASE("sum_to reduces a gradient to a broadcast source shape", "[ops]") {
  Tensor g = t({1, 2, 3, 4, 5, 6}, {2, 3});
  check_close(sum_to(g, {3}), {5, 7, 9}, 0, 0);
  check_close(sum_to(g, {1, 3}), {5, 7, 9}, 0, 0);
  check_close(sum_to(g, {2, 1}), {6, 15}, 0, 0);
  check_close(sum_to(g, {}), {21}, 0, 0);
  CHECK(sum_to(g, {2, 3}).same(g));
  REQUIRE_THROWS_WITH(sum_to(g, {4}), Contains("shape [4] does not broadcast to the gradient's shape [2, 3]"));
  REQUIRE_THROWS_WITH(sum_to(g, {1, 2, 3, 1}), Contains("shape [1, 2, 3, 1] does not broadcast"));
}

TEST_CASE("gradients of add/sub/mul/div by finite differences", "[ops][autograd]") {
  Generator gen(11);
  auto positive = [&](const Shape& s) { return Tensor::rand(s, gen, 0.5f, 2.0f); };
  const std::vector<std::pair<Shape, Shape>> cases = {{{3, 4}, {3, 4}}, {{3, 4}, {4}},       {{4}, {3, 4}},
                                                      {{3, 1}, {1, 4}}, {{2, 3, 4}, {3, 1}}, {{3, 4}, {}},
                                                      {{}, {2, 2}}};
  for (const auto& [sa, sb] : cases) {
    INFO("shapes " << to_string(sa) << " and " << to_string(sb));
    check_gradients([](const std::vector<Tensor>& in) { return add(in[0], in[1]); },
                    {Tensor::randn(sa, gen), Tensor::randn(sb, gen)});
    check_gradients([](const std::vector<Tensor>& in) { return sub(in[0], in[1]); },
                    {Tensor::randn(sa, gen), Tensor::randn(sb, gen)});
    check_gradients([](const std::vector<Tensor>& in) { return mul(in[0], in[1]); },
                    {Tensor::randn(sa, gen), Tensor::randn(sb, gen)});
    check_gradients([](const std::vector<Tensor>& in) { return div(in[0], in[1]); },
                    {Tensor::randn(sa, gen), positive(sb)});
  }
  // The same tensor on both sides: both gradients reach it.
  check_gradients([](const std::vector<Tensor>& in) { return mul(in[0], in[0]); }, {Tensor::randn({5}, gen)});
  check_gradients([](const std::vector<Tensor>& in) { return div(in[0], in[0] + 3.0f); }, {positive({5})});
  check_gradients([](const std::vector<Tensor>& in) { return sub(in[0], in[0] * in[0]); }, {Tensor::randn({5}, gen)});
}

TEST_CASE("a gradient flows only to the inputs that need it", "[ops][autograd]") {
  Tensor a = Tensor::from_vector({1, 2}).requires_grad_();
  Tensor b = Tensor::from_vector({4, 8});
  sum(div(a, b)).backward();
  check_close(a.grad(), {0.25f, 0.125f}, 0, 0);
  CHECK_FALSE(b.grad().defined());
  Tensor c = Tensor::from_vector({1, 2});
  Tensor d = Tensor::from_vector({4, 8}).requires_grad_();
  sum(div(c, d)).backward();
  check_close(d.grad(), {-1.0f / 16, -2.0f / 64}, 0, 1e-7);
  CHECK_FALSE(c.grad().defined());
}

}  // namespace test_ops_binary
