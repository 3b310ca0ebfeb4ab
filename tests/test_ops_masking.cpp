// masked_fill, tril and triu: values, broadcasting, errors, PyTorch's fixtures
// (scripts/fixtures/sequence.py) and finite differences.
#include <cmath>

#include "support/check.hpp"
#include "support/fixture_calls.hpp"

namespace test_ops_masking {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;
using minidl::testing::check_gradients;
using minidl::testing::kLinearStep;

TEST_CASE("masked_fill puts the value where the mask is 1, broadcasting both ways", "[ops][seqops]") {
  Tensor x = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  check_close(masked_fill(x, Tensor::from_vector({0, 1, 0, 1, 0, 0}, {2, 3}), -1.0f), {1, -1, 3, -1, 5, 6}, 0, 0);
  // A (3) mask applies to every row; a (2, 1) mask to whole rows.
  check_close(masked_fill(x, Tensor::from_vector({1, 0, 0}), 9.0f), {9, 2, 3, 9, 5, 6}, 0, 0);
  check_close(masked_fill(x, Tensor::from_vector({0, 1}, {2, 1}), 0.0f), {1, 2, 3, 0, 0, 0}, 0, 0);
  // As torch.masked_fill, x broadcasts to the mask's shape too: (3) with a (2, 3) mask.
  Tensor row = Tensor::from_vector({1, 2, 3});
  Tensor filled = masked_fill(row, Tensor::from_vector({1, 0, 0, 0, 0, 1}, {2, 3}), 0.0f);
  CHECK(filled.shape() == Shape{2, 3});
  check_close(filled, {0, 2, 3, 1, 2, 0}, 0, 0);
}

TEST_CASE("masked_fill's gradient skips the filled entries and sums broadcast copies", "[ops][autograd][seqops]") {
  Tensor row = Tensor::from_vector({1, 2, 3}).requires_grad_();
  sum(masked_fill(row, Tensor::from_vector({1, 0, 0, 0, 0, 1}, {2, 3}), 0.0f)).backward();
  check_close(row.grad(), {1, 2, 1}, 0, 0);
  Generator gen(37);
  Tensor mask = Tensor::from_vector({1, 0, 0, 1, 1, 0, 0, 0}, {2, 1, 4});
  check_gradients([&](const std::vector<Tensor>& in) { return masked_fill(in[0], mask, 3.0f); },
                  {Tensor::randn({2, 3, 4}, gen)}, kLinearStep);
  // x (4) copied into the mask's (2, 1, 4) rows.
  check_gradients([&](const std::vector<Tensor>& in) { return masked_fill(in[0], mask, 2.0f); },
                  {Tensor::randn({4}, gen)}, kLinearStep);
}

TEST_CASE("masked_fill refuses a mask that does not broadcast, or one of other values than 0 and 1", "[ops][seqops]") {
  Tensor x = Tensor::zeros({2, 3});
  REQUIRE_THROWS_WITH(masked_fill(x, Tensor::ones({4}), 0.0f),
                      Contains("masked_fill: the mask's shape [4] does not broadcast with the input's [2, 3]"));
  REQUIRE_THROWS_WITH(masked_fill(x, Tensor::from_vector({0, 0.5f, 1}), 0.0f),
                      Contains("masked_fill: expected a mask of 0s and 1s (minidl's masks are float32, 1 for true), "
                               "got 0.5 at flat index 1 of the mask of shape [3]"));
}

TEST_CASE("tril and triu keep a triangle of the last two dims, and triu(ones, 1) is the causal mask", "[ops][seqops]") {
  Tensor x = Tensor::arange(1.0f, 10.0f).reshape({3, 3});
  check_close(tril(x), {1, 0, 0, 4, 5, 0, 7, 8, 9}, 0, 0);
  check_close(triu(x), {1, 2, 3, 0, 5, 6, 0, 0, 9}, 0, 0);
  check_close(tril(x, -1), {0, 0, 0, 4, 0, 0, 7, 8, 0}, 0, 0);
  check_close(triu(Tensor::ones({3, 3}), 1), {0, 1, 1, 0, 0, 1, 0, 0, 0}, 0, 0);
  // Rectangular and batched: each (2, 4) matrix of a (2, 2, 4).
  check_close(tril(Tensor::ones({2, 2, 4}), 1), {1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 0}, 0, 0);
  check_close(triu(Tensor::ones({2, 3}), 5), std::vector<float>(6, 0.0f), 0, 0);
  REQUIRE_THROWS_WITH(tril(Tensor::ones({3})),
                      Contains("tril: expected a tensor with at least 2 dims (it keeps a triangle of the last two), "
                               "got shape [3]"));
  REQUIRE_THROWS_WITH(triu(Tensor::scalar(1.0f)), Contains("triu: expected a tensor with at least 2 dims"));
}

TEST_CASE("a causal mask through masked_fill and softmax: each position attends to itself and the past",
          "[ops][seqops]") {
  Tensor scores = Tensor::zeros({3, 3});
  Tensor weights = softmax(masked_fill(scores, triu(Tensor::ones({3, 3}), 1), -INFINITY), -1);
  check_close(weights, {1, 0, 0, 0.5f, 0.5f, 0, 1 / 3.0f, 1 / 3.0f, 1 / 3.0f}, 1e-7, 0);
}

TEST_CASE("fixtures: masked_fill, tril and triu match PyTorch", "[fixtures][seqops]") {
  const auto masked = minidl::testing::fixtures_of("masked_fill");
  CHECK(masked.size() == 4);
  for (const minidl::testing::Fixture& fx : masked) {
    const float value = fx["value"].item();
    minidl::testing::check_single_call(
        fx, [&](const Tensor& x) { return masked_fill(x, fx["mask"], value); }, 0, 0);
  }
  for (const char* op : {"tril", "triu"}) {
    const auto fixtures = minidl::testing::fixtures_of(op);
    CHECK(fixtures.size() == 4);
    for (const minidl::testing::Fixture& fx : fixtures) {
      const int64_t diagonal = fx.options().at("diagonal");
      const bool lower = std::string(op) == "tril";
      minidl::testing::check_single_call(
          fx, [&](const Tensor& x) { return lower ? tril(x, diagonal) : triu(x, diagonal); }, 0, 0);
    }
  }
}

TEST_CASE("tril and triu gradients by finite differences", "[ops][autograd][seqops]") {
  Generator gen(38);
  check_gradients([](const std::vector<Tensor>& in) { return tril(in[0], 1); }, {Tensor::randn({2, 3, 4}, gen)},
                  kLinearStep);
  check_gradients([](const std::vector<Tensor>& in) { return triu(in[0], -1); }, {Tensor::randn({4, 3}, gen)},
                  kLinearStep);
}

}  // namespace test_ops_masking
