// reshape, transpose, select_rows, clone, log_softmax: values, gradients, errors.
#include <cmath>

#include "support/check.hpp"
#include "support/fixture.hpp"

namespace test_ops_shape {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

TEST_CASE("transpose of a matrix", "[ops]") {
  Tensor x = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = transpose(x);
  CHECK(y.shape() == Shape{3, 2});
  check_close(y, {1, 4, 2, 5, 3, 6}, 0, 0);
  check_close(transpose(y), x, 0, 0);
  REQUIRE_THROWS_WITH(transpose(Tensor::zeros({2, 3, 4})),
                      Contains("transpose: expected a tensor with at most 2 dims (as torch.t), got shape [2, 3, 4]"));
}

TEST_CASE("transpose of a vector or a scalar returns it as it is, as torch.t", "[ops][autograd]") {
  // PyTorch 1.13: torch.arange(3.).t() is tensor([0., 1., 2.]); a scalar's t() is itself; the
  // gradient passes through unchanged (x.t() * [1, 2, 3] summed gives x.grad [1, 2, 3]).
  Tensor v = Tensor::from_vector({1, 2, 3}).requires_grad_();
  Tensor tv = transpose(v);
  CHECK(tv.shape() == Shape{3});
  check_close(tv, {1, 2, 3}, 0, 0);
  sum(mul(tv, Tensor::from_vector({1, 2, 3}))).backward();
  check_close(v.grad(), {1, 2, 3}, 0, 0);
  Tensor s = Tensor::scalar(4.0f).requires_grad_();
  Tensor ts = transpose(s);
  CHECK(ts.dim() == 0);
  CHECK(ts.item() == 4.0f);
  mul(ts, Tensor::scalar(5.0f)).backward();
  CHECK(s.grad().item() == 5.0f);
  Generator gen(34);
  check_gradients([](const std::vector<Tensor>& in) { return transpose(in[0]); }, {Tensor::randn({4}, gen)});
  CHECK(transpose(Tensor::zeros({0})).shape() == Shape{0});
}

TEST_CASE("select_rows picks rows in order, repeats allowed", "[ops]") {
  Tensor x = Tensor::from_vector({0, 1, 10, 11, 20, 21, 30, 31}, {4, 2});
  Tensor y = select_rows(x, {2, 0, 2});
  CHECK(y.shape() == Shape{3, 2});
  check_close(y, {20, 21, 0, 1, 20, 21}, 0, 0);
  CHECK(select_rows(x, {}).shape() == Shape{0, 2});
  Tensor v = Tensor::from_vector({5, 6, 7});
  check_close(select_rows(v, {1, 1}), {6, 6}, 0, 0);
  Tensor cube = Tensor::arange(12).reshape({3, 2, 2});
  check_close(select_rows(cube, {1}), {4, 5, 6, 7}, 0, 0);
  REQUIRE_THROWS_WITH(select_rows(x, {1, 4}),
                      Contains("select_rows: index 4 is out of range for dimension 0 with size 4 (shape [4, 2])"));
  REQUIRE_THROWS_WITH(select_rows(x, {-1}), Contains("index -1 is out of range"));
  REQUIRE_THROWS_WITH(select_rows(Tensor::scalar(1.0f), {0}), Contains("got a scalar"));
}

TEST_CASE("log_softmax values, stable on large inputs", "[ops]") {
  Tensor x = Tensor::from_vector({1, 2, 3, 1000, 1001, 1002}, {2, 3});
  // log_softmax([1, 2, 3]) = [1, 2, 3] - 3.40760596
  const std::vector<float> expected = {-2.40760596f, -1.40760596f, -0.40760596f,
                                       -2.40760596f, -1.40760596f, -0.40760596f};
  check_close(log_softmax(x, 1), expected, 1e-6, 0);
  check_close(log_softmax(x), expected, 1e-6, 0);
  // log_softmax([1000, 1001]) = [-1.31326169, -0.31326169]: exactly representable
  // to within float's step near 1, not near 1000.
  check_close(log_softmax(Tensor::from_vector({1000, 1001})), {-1.31326169f, -0.31326169f}, 1e-6, 0);
  check_close(log_softmax(Tensor::from_vector({-1000, -1001})), {-0.31326169f, -1.31326169f}, 1e-6, 0);
  // Along dim 0 of a (3, 2): each column is a distribution.
  Tensor cols = log_softmax(transpose(x), 0);
  check_close(cols, {-2.40760596f, -2.40760596f, -1.40760596f, -1.40760596f, -0.40760596f, -0.40760596f}, 1e-6, 0);
  // exp sums to one along the dim, for a 3-D input along the middle dim.
  Generator gen(20);
  Tensor probs = exp(log_softmax(Tensor::randn({2, 5, 3}, gen, 0.0f, 10.0f), 1));
  check_close(sum(probs, {1}), std::vector<float>(6, 1.0f), 1e-6, 0);
  CHECK(log_softmax(Tensor::scalar(4.0f), 0).item() == 0.0f);
}

TEST_CASE("gradients of shape ops and log_softmax by finite differences", "[ops][autograd]") {
  Generator gen(21);
  using Inputs = const std::vector<Tensor>&;
  check_gradients([](Inputs in) { return in[0].reshape({4, -1}); }, {Tensor::randn({2, 6}, gen)});
  check_gradients([](Inputs in) { return reshape(in[0], {3, 2, 2}) * 2.0f; }, {Tensor::randn({12}, gen)});
  check_gradients([](Inputs in) { return transpose(in[0]); }, {Tensor::randn({3, 5}, gen)});
  check_gradients([](Inputs in) { return in[0].clone(); }, {Tensor::randn({4}, gen)});
  check_gradients([](Inputs in) { return select_rows(in[0], {3, 0, 3, 1}); }, {Tensor::randn({5, 2}, gen)});
  for (int64_t dim : {0, 1, -1})
    check_gradients([dim](Inputs in) { return log_softmax(in[0], dim); }, {Tensor::randn({3, 4}, gen)});
  check_gradients([](Inputs in) { return log_softmax(in[0], 1); }, {Tensor::randn({2, 3, 2}, gen)});
}

TEST_CASE("select_rows adds the gradients of repeated rows", "[ops][autograd]") {
  Tensor x = Tensor::zeros({3, 2}).requires_grad_();
  Tensor w = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {3, 2});
  sum(mul(select_rows(x, {2, 0, 2}), w)).backward();
  check_close(x.grad(), {3, 4, 0, 0, 6, 8}, 0, 0);
}

TEST_CASE("transpose of any two dims matches PyTorch's torch.transpose", "[ops][fixtures]") {
  const auto fixtures = minidl::testing::fixtures_of("transpose");
  CHECK(fixtures.size() == 3);
  for (const minidl::testing::Fixture& fx : fixtures) {
    const int64_t d0 = fx.options().at("dim0"), d1 = fx.options().at("dim1");
    minidl::testing::check_call(fx, "", [&](const Tensor& x) { return transpose(x, d0, d1); });
  }
  Tensor cube = Tensor::arange(24).reshape({2, 3, 4});
  Tensor t = transpose(cube, 0, -1);
  CHECK(t.shape() == Shape{4, 3, 2});
  CHECK(t.at({3, 1, 0}) == cube.at({0, 1, 3}));
  CHECK(transpose(cube, 1, 1).to_vector() == cube.to_vector());
  CHECK(transpose(Tensor::scalar(2), 0, -1).item() == 2.0f);
  REQUIRE_THROWS_WITH(transpose(cube, 0, 3), Contains("expected to be in range of [-3, 2], but got 3"));
  Generator gen(33);
  check_gradients([](const std::vector<Tensor>& in) { return transpose(in[0], 1, -1); },
                  {Tensor::randn({2, 3, 4}, gen)});
}

}  // namespace test_ops_shape
