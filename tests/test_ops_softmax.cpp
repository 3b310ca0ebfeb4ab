// softmax: values, a fully masked row, PyTorch's fixtures (scripts/fixtures/sequence.py) and
// finite differences.
#include <cmath>

#include "support/check.hpp"
#include "support/fixture_calls.hpp"

namespace test_ops_softmax {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

TEST_CASE("softmax values, stable on large inputs, along any dim", "[ops][seqops]") {
  // softmax([1, 2, 3]) in float64: 0.09003057, 0.24472847, 0.66524096.
  const std::vector<float> expected = {0.09003057f, 0.24472847f, 0.66524096f};
  check_close(softmax(Tensor::from_vector({1, 2, 3})), expected, 1e-7, 1e-6);
  check_close(softmax(Tensor::from_vector({1001, 1002, 1003})), expected, 1e-7, 1e-6);
  check_close(softmax(Tensor::from_vector({1, 2, 3}, {3, 1}), 0), expected, 1e-7, 1e-6);
  // Each line along dim 1 of a (2, 5, 3) sums to one, and softmax is exp(log_softmax).
  Generator gen(35);
  Tensor x = Tensor::randn({2, 5, 3}, gen, 0.0f, 5.0f);
  check_close(sum(softmax(x, 1), {1}), std::vector<float>(6, 1.0f), 1e-6, 0);
  check_close(softmax(x, 1), exp(log_softmax(x, 1)), 1e-6, 1e-5);
  CHECK(softmax(Tensor::scalar(7.0f)).item() == 1.0f);
  REQUIRE_THROWS_WITH(softmax(x, 3), Catch::Contains("expected to be in range of [-3, 2], but got 3"));
}

TEST_CASE("softmax gives exact zeros at -inf, and NaN for a row of -inf, as PyTorch", "[ops][seqops]") {
  const float inf = INFINITY;
  Tensor x = Tensor::from_vector({0, -inf, 0, -inf, -inf, -inf}, {2, 3}).requires_grad_();
  Tensor y = softmax(x);
  const std::vector<float> values = y.to_vector();
  CHECK(values[0] == 0.5f);
  CHECK(values[1] == 0.0f);
  CHECK(values[2] == 0.5f);
  // torch.softmax(torch.full((3,), -inf), 0) is [nan, nan, nan]: every key masked.
  for (int i = 3; i < 6; ++i) CHECK(std::isnan(values[size_t(i)]));
  y.backward(Tensor::from_vector({1, 5, 3, 1, 1, 1}, {2, 3}));
  const std::vector<float> grad = x.grad().to_vector();
  // Row 0: y (g - y.g) = 0.5 (1 - 2), 0, 0.5 (3 - 2); the masked entry gets no gradient.
  CHECK(grad[0] == -0.5f);
  CHECK(grad[1] == 0.0f);
  CHECK(grad[2] == 0.5f);
}

TEST_CASE("fixtures: softmax matches PyTorch on every dim, large and masked logits", "[fixtures][seqops]") {
  const auto fixtures = minidl::testing::fixtures_of("softmax");
  CHECK(fixtures.size() == 6);
  for (const minidl::testing::Fixture& fx : fixtures) {
    const int64_t dim = fx.options().at("dim");
    minidl::testing::check_single_call(fx, [&](const Tensor& x) { return softmax(x, dim); });
  }
}

TEST_CASE("softmax's gradient by finite differences", "[ops][autograd][seqops]") {
  Generator gen(36);
  using Inputs = const std::vector<Tensor>&;
  for (int64_t dim : {0, 1, -1})
    check_gradients([dim](Inputs in) { return softmax(in[0], dim); }, {Tensor::randn({3, 4}, gen)});
  check_gradients([](Inputs in) { return softmax(in[0], 1); }, {Tensor::randn({2, 3, 2}, gen)});
  check_gradients([](Inputs in) { return softmax(in[0], -1); }, {Tensor::randn({2, 2, 3, 3}, gen)});
}

}  // namespace test_ops_softmax
