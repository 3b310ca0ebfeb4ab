// multinomial (tested for its distribution: minidl's Generator cannot replay PyTorch's
// stream), topk and top_k_filter: values, errors, PyTorch's fixtures
// (scripts/fixtures/sequence.py) and finite differences.
#include <cmath>
#include <set>

#include "support/check.hpp"
#include "support/chi_square.hpp"
#include "support/fixture_calls.hpp"

namespace test_ops_sampling {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;
using minidl::testing::check_gradients;
using minidl::testing::chi_square;
using minidl::testing::kLinearStep;

TEST_CASE("multinomial with replacement draws each category at its probability (chi-square)", "[ops][seqops]") {
  // Weights 1 : 2 : 3 : 4 : 0 (multinomial normalizes them), 200000 draws in one row.
  const int64_t draws = 200000;
  Generator gen(40);
  Tensor samples = multinomial(Tensor::from_vector({1, 2, 3, 4, 0}), draws, true, gen);
  CHECK(samples.shape() == Shape{draws});
  std::vector<int64_t> counts(5, 0);
  for (float s : samples.to_vector()) ++counts[size_t(s)];
  CHECK(counts[4] == 0);  // weight 0: never drawn
  // 3 degrees of freedom: a correct sampler exceeds 35 with probability 1.2e-7 for any seed;
  // a sampler 1% off in one probability scores about 200 here.
  const double statistic = chi_square(counts, {0.1, 0.2, 0.3, 0.4, 0.0}, draws);
  INFO("chi-square " << statistic << " over counts " << counts[0] << ", " << counts[1] << ", " << counts[2] << ", "
                     << counts[3]);
  CHECK(statistic < 35.0);
}

TEST_CASE("multinomial without replacement draws ordered pairs at p_i p_j / (1 - p_i) (chi-square)", "[ops][seqops]") {
  const std::vector<double> p = {0.1, 0.2, 0.3, 0.4};
  const int64_t rows = 40000;
  Tensor probs = Tensor::empty({rows, 4});
  for (int64_t i = 0; i < probs.numel(); ++i) probs.data()[i] = float(p[size_t(i % 4)]);
  Generator gen(41);
  Tensor pairs = multinomial(probs, 2, false, gen);
  CHECK(pairs.shape() == Shape{rows, 2});
  std::vector<int64_t> counts(16, 0);
  std::vector<double> expected(16, 0.0);
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 4; ++j)
      if (i != j) expected[i * 4 + j] = p[i] * p[j] / (1.0 - p[i]);
  bool repeats = false;
  for (int64_t r = 0; r < rows; ++r) {
    const auto first = size_t(pairs.data()[r * 2]), second = size_t(pairs.data()[r * 2 + 1]);
    repeats = repeats || first == second;
    ++counts[first * 4 + second];
  }
  CHECK(!repeats);
  // 12 ordered pairs, 11 degrees of freedom: a correct sampler exceeds 55 with probability
  // 7.7e-8 for any seed.
  const double statistic = chi_square(counts, expected, rows);
  INFO("chi-square " << statistic);
  CHECK(statistic < 55.0);
  // Every category once: a permutation.
  const std::vector<float> all = multinomial(Tensor::from_vector({0.1f, 0.2f, 0.3f, 0.4f}), 4, false, gen).to_vector();
  CHECK(std::set<float>(all.begin(), all.end()).size() == 4);
}

TEST_CASE("multinomial draws each row from its own distribution, the same draws from the same seed", "[ops][seqops]") {
  Generator gen(42);
  Tensor probs = Tensor::from_vector({0, 0, 1, 1, 0, 0}, {2, 3});
  check_close(multinomial(probs, 3, true, gen), {2, 2, 2, 0, 0, 0}, 0, 0);
  Tensor weights = Tensor::from_vector({0.3f, 0.5f, 0.2f});
  Generator a(7), b(7);
  CHECK(multinomial(weights, 20, true, a).to_vector() == multinomial(weights, 20, true, b).to_vector());
  manual_seed(8);
  const std::vector<float> first = multinomial(weights, 2).to_vector();
  manual_seed(8);
  CHECK(multinomial(weights, 2).to_vector() == first);
}

TEST_CASE("multinomial refuses what is not a distribution, naming the entry and the shape", "[ops][seqops]") {
  Generator gen(43);
  REQUIRE_THROWS_WITH(multinomial(Tensor::ones({2, 2, 2}), 1, true, gen),
                      Contains("multinomial: expected probabilities of shape (V) or (B, V), got [2, 2, 2]"));
  REQUIRE_THROWS_WITH(multinomial(Tensor::from_vector({0.5f, -0.1f}), 1, true, gen),
                      Contains("multinomial: expected finite probabilities >= 0, got -0.1 at index 1 of row 0 "
                               "(shape [2])"));
  REQUIRE_THROWS_WITH(multinomial(Tensor::from_vector({1, 1, 1, NAN}, {2, 2}), 1, true, gen),
                      Contains("got nan at index 1 of row 1 (shape [2, 2])"));
  REQUIRE_THROWS_WITH(multinomial(Tensor::from_vector({INFINITY, 1}), 1, true, gen), Contains("got inf at index 0"));
  REQUIRE_THROWS_WITH(multinomial(Tensor::zeros({2}), 1, true, gen),
                      Contains("multinomial: expected a row of probabilities with a positive sum, row 0 sums to 0 "
                               "(shape [2])"));
  REQUIRE_THROWS_WITH(multinomial(Tensor::ones({2}), 0, true, gen),
                      Contains("multinomial: expected num_samples > 0, got 0"));
  REQUIRE_THROWS_WITH(multinomial(Tensor::ones({2}), 3, false, gen),
                      Contains("multinomial: cannot draw 3 samples without replacement from 2 categories (shape [2])"));
  REQUIRE_THROWS_WITH(multinomial(Tensor::from_vector({0.5f, 0, 0}), 2, false, gen),
                      Contains("multinomial: cannot draw 2 samples without replacement from row 0, which has 1 "
                               "categories of positive probability (shape [3])"));
}

TEST_CASE("topk gives the k largest or smallest in order, ties in index order, NaN the largest", "[ops][seqops]") {
  Tensor x = Tensor::from_vector({1, 3, 3, 2});
  TopK top = topk(x, 2);
  check_close(top.values, {3, 3}, 0, 0);
  check_close(top.indices, {1, 2}, 0, 0);  // torch.topk gives [1, 2] too
  TopK bottom = topk(x, 2, 0, false);
  check_close(bottom.values, {1, 2}, 0, 0);
  check_close(bottom.indices, {0, 3}, 0, 0);
  Tensor with_nan = Tensor::from_vector({1, NAN, 2});
  CHECK(topk(with_nan, 1).indices.item() == 1.0f);
  CHECK(topk(with_nan, 1, -1, false).indices.item() == 0.0f);
  // Along dim 0 of a (3, 2): each column on its own.
  TopK columns = topk(Tensor::from_vector({1, 6, 5, 2, 3, 4}, {3, 2}), 2, 0);
  check_close(columns.values, {5, 6, 3, 4}, 0, 0);
  check_close(columns.indices, {1, 0, 2, 2}, 0, 0);
  CHECK(topk(x, 0).values.shape() == Shape{0});
  REQUIRE_THROWS_WITH(topk(Tensor::zeros({2, 5}), 6),
                      Contains("topk: expected 0 <= k <= 5 (the size of dim 1 of shape [2, 5]), got k = 6"));
  REQUIRE_THROWS_WITH(topk(Tensor::zeros({2, 5}), -1, 0), Contains("expected 0 <= k <= 2 (the size of dim 0"));
  REQUIRE_THROWS_WITH(topk(Tensor::scalar(1.0f), 1), Contains("topk: expected a tensor with at least one dim"));
}

TEST_CASE("fixtures: topk matches PyTorch's values, indices and gradient", "[fixtures][seqops]") {
  const auto fixtures = minidl::testing::fixtures_of("topk");
  CHECK(fixtures.size() == 4);
  for (const minidl::testing::Fixture& fx : fixtures) {
    const nlohmann::json& o = fx.options();
    const int64_t k = o.at("k"), dim = o.at("dim");
    const bool largest = o.at("largest");
    check_close(topk(fx["input"], k, dim, largest).indices, fx["indices"], 0, 0);
    minidl::testing::check_single_call(
        fx, [&](const Tensor& x) { return topk(x, k, dim, largest).values; }, 0, 0);
  }
  // Entries 1 apart, so the step of 0.1 never changes which are picked.
  Tensor spread = Tensor::from_vector({3, -1, 4, 1.5f, -5, 9, 2, 6}, {2, 4});
  check_gradients([](const std::vector<Tensor>& in) { return topk(in[0], 2).values; }, {spread}, kLinearStep);
  check_gradients([](const std::vector<Tensor>& in) { return topk(in[0], 1, 0, false).values; }, {spread}, kLinearStep);
}

TEST_CASE("top_k_filter keeps the k largest logits of each row (ties too) and sets the rest to -inf", "[ops][seqops]") {
  const float inf = INFINITY;
  Tensor logits = Tensor::from_vector({1, 5, 3, 4, 1, 4, 4, 2}, {2, 4}).requires_grad_();
  Tensor kept = top_k_filter(logits, 2);
  const auto expect = [](const Tensor& actual, const std::vector<float>& expected) {
    minidl::testing::check_close_with_infinities(actual, Tensor::from_vector(expected, {2, 4}), 0, 0);
  };
  expect(kept, {-inf, 5, -inf, 4, -inf, 4, 4, -inf});
  expect(top_k_filter(logits, 1), {-inf, 5, -inf, -inf, -inf, 4, 4, -inf});  // a tie keeps both
  check_close(top_k_filter(logits, 4), logits, 0, 0);
  kept.backward(Tensor::from_vector({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}));
  check_close(logits.grad(), {0, 2, 0, 4, 0, 6, 7, 0}, 0, 0);
  REQUIRE_THROWS_WITH(top_k_filter(logits, 0),
                      Contains("top_k_filter: expected 1 <= k <= the size of the last dim of shape [2, 4], got k = 0"));
  REQUIRE_THROWS_WITH(top_k_filter(logits, 5), Contains("got k = 5"));
}

TEST_CASE("temperature, top-k, softmax, multinomial: only the k most likely tokens are drawn", "[ops][seqops]") {
  Tensor logits = Tensor::from_vector({0.5f, 2.0f, -1.0f, 1.9f, 0.0f}, {1, 5});
  const float temperature = 0.7f;
  Tensor probs = softmax(top_k_filter(logits / temperature, 2), -1);
  Generator gen(44);
  Tensor drawn = multinomial(probs, 1000, true, gen);
  std::set<float> seen;
  for (float token : drawn.to_vector()) seen.insert(token);
  CHECK(seen == std::set<float>{1.0f, 3.0f});
}

}  // namespace test_ops_sampling
