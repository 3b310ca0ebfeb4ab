// scaled_dot_product_attention: values by hand, masks of both kinds, the causal mask, rows
// with every key masked, errors, dropout of the weights, PyTorch's fixtures
// (scripts/fixtures/attention.py) and finite differences.
#include <algorithm>
#include <cmath>
#include <vector>

#include "minidl/ops/attention.hpp"
#include "support/check.hpp"
#include "support/dropped_weights.hpp"
#include "support/fixture_calls.hpp"

namespace test_attention {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

namespace {

const float kInf = INFINITY;

// The options a fixture of scripts/fixtures/attention.py names; the additive mask is input3.
AttentionOptions sdpa_options(const minidl::testing::Fixture& fx, const std::vector<Tensor>& inputs) {
  AttentionOptions options;
  const std::string kind = fx.options()["mask"];
  if (kind == "boolean") options.attn_mask = AttentionMask::boolean(fx["mask"]);
  if (kind == "additive") options.attn_mask = AttentionMask::additive(inputs[3]);
  options.is_causal = fx.options()["is_causal"];
  if (!fx.options()["scale"].is_null()) options.scale = fx.options()["scale"].get<double>();
  return options;
}

}  // namespace

TEST_CASE("scaled_dot_product_attention by hand: one query, two keys", "[attention]") {
  // q k^T = [2, 0], scaled by 1/sqrt(2): softmax([sqrt 2, 0]) weighs v's rows.
  Tensor q = Tensor::from_vector({1, 1}, {1, 2});
  Tensor k = Tensor::from_vector({1, 1, 0, 0}, {2, 2});
  Tensor v = Tensor::from_vector({10, 0, 0, 10}, {2, 2});
  const float w = 1.0f / (1.0f + std::exp(-std::sqrt(2.0f)));
  check_close(scaled_dot_product_attention(q, k, v), {10 * w, 10 * (1 - w)}, 1e-5, 1e-6);
  // scale 0: uniform weights; a boolean mask keeping the second key only; an additive one.
  check_close(scaled_dot_product_attention(q, k, v, {.scale = 0.0}), {5, 5}, 1e-6, 0);
  const Tensor keep_second = Tensor::from_vector({0, 1}, {1, 2});
  check_close(scaled_dot_product_attention(q, k, v, {.attn_mask = AttentionMask::boolean(keep_second)}), {0, 10}, 0, 0);
  const Tensor minus_inf_first = Tensor::from_vector({-kInf, 0}, {1, 2});
  check_close(scaled_dot_product_attention(q, k, v, {.attn_mask = AttentionMask::additive(minus_inf_first)}), {0, 10},
              0, 0);
}

TEST_CASE("is_causal keeps the lower triangle, aligned top-left when L != S", "[attention]") {
  Tensor q = Tensor::zeros({3, 2}), k = Tensor::zeros({4, 2});
  Tensor v = Tensor::from_vector({1, 2, 4, 8}, {4, 1});
  // Equal scores: query i averages keys 0..i. The mask is aligned top-left (row i keeps
  // columns 0..i), as PyTorch's is_causal, not bottom-right (columns up to i + S - L).
  check_close(scaled_dot_product_attention(q, k, v, {.is_causal = true}), {1, 1.5f, 7 / 3.0f}, 1e-6, 0);
}

TEST_CASE("a row whose every key is masked gives zeros and finite gradients, as PyTorch 2.5+", "[attention]") {
  Generator gen(35);
  Tensor q = Tensor::randn({2, 3}, gen).requires_grad_(), k = Tensor::randn({3, 3}, gen).requires_grad_();
  Tensor v = Tensor::randn({3, 2}, gen).requires_grad_();
  const Tensor keep = Tensor::from_vector({1, 0, 1, 0, 0, 0}, {2, 3});
  for (const AttentionMask& mask : {AttentionMask::boolean(keep), AttentionMask::additive(Tensor::from_vector(
                                                                      {0, -kInf, 0, -kInf, -kInf, -kInf}, {2, 3}))}) {
    Tensor y = scaled_dot_product_attention(q, k, v, {.attn_mask = mask});
    check_close(narrow(y, 0, 1, 1), {0, 0}, 0, 0);
    sum(y).backward();
    for (const Tensor& t : {q, k, v})
      for (float g : t.grad().to_vector()) CHECK(std::isfinite(g));
    check_close(narrow(q.grad(), 0, 1, 1), {0, 0, 0}, 0, 0);  // the dead query gets no gradient
    for (const Tensor& t : {q, k, v}) Tensor(t).zero_grad();
  }
}

TEST_CASE("scaled_dot_product_attention refuses bad shapes and masks, naming them", "[attention]") {
  const Tensor q = Tensor::zeros({2, 3, 4}), k = Tensor::zeros({2, 5, 4}), v = Tensor::zeros({2, 5, 6});
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, Tensor::zeros({2, 5, 3}), v),
                      Contains("scaled_dot_product_attention: expected query (..., L, E) and key (..., S, E) with the "
                               "same E, got query [2, 3, 4] and key [2, 5, 3]"));
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(Tensor::zeros({4}), k, v),
                      Contains("expected query (..., L, E) and key (..., S, E) with the same E, got query [4]"));
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, k, Tensor::zeros({2, 4, 6})),
                      Contains("scaled_dot_product_attention: expected key (..., S, E) and value (..., S, Ev) with the "
                               "same S, got key [2, 5, 4] and value [2, 4, 6]"));
  REQUIRE_THROWS_WITH(
      scaled_dot_product_attention(q, k, v, {.attn_mask = AttentionMask::boolean(Tensor::ones({3, 4}))}),
      Contains("scaled_dot_product_attention: expected attn_mask broadcastable to the scores' shape "
               "[2, 3, 5] (..., L, S), got [3, 4]"));
  // (3, 3, 5) broadcasts with (2, 3, 5) nowhere; (1, 2, 3, 5) would grow the scores' rank.
  REQUIRE_THROWS_WITH(
      scaled_dot_product_attention(q, k, v, {.attn_mask = AttentionMask::additive(Tensor::zeros({1, 2, 3, 5}))}),
      Contains("broadcastable to the scores' shape [2, 3, 5] (..., L, S), got [1, 2, 3, 5]"));
  REQUIRE_THROWS_WITH(
      scaled_dot_product_attention(q, k, v,
                                   {.attn_mask = AttentionMask::boolean(Tensor::ones({3, 5})), .is_causal = true}),
      Contains("scaled_dot_product_attention: explicit attn_mask should not be set when is_causal=True"));
  REQUIRE_THROWS_WITH(
      scaled_dot_product_attention(q, k, v, {.attn_mask = AttentionMask::boolean(Tensor::full({5}, 0.5f))}),
      Contains("attention: expected a boolean mask of 0s and 1s (minidl's masks are float32, 1 for "
               "true = takes part), got 0.5 at flat index 0 of the mask of shape [5]"));
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, k, v, {.dropout_p = 1.5}),
                      Contains("dropout probability has to be between 0 and 1, but got 1.5"));
}

namespace {

// Dropout's tests read the weights themselves: with value the identity (S, S), each output
// element is one weight times 1 plus zeros, so the output is the (dropped) weights, exactly.
// q and k are uniform in [-1, 1], so that the weights differ from each other: all-ones q, k
// and v give each weight 1/S and each output (kept weights) / (S (1 - p)), a multiple of
// 1 / (S (1 - p)) whether or not any weight was dropped.
constexpr int64_t kBatch = 6, kL = 16, kS = 16, kE = 8;
constexpr double kU = minidl::testing::kUnitRoundoff;

Tensor identity(int64_t n) {
  Tensor eye = Tensor::zeros({n, n});
  for (int64_t i = 0; i < n; ++i) eye.data()[i * n + i] = 1.0f;
  return eye;
}

Tensor attention_weights(const Tensor& q, const Tensor& k, const AttentionOptions& options) {
  return scaled_dot_product_attention(q, k, identity(k.size(-2)), options);
}

// softmax(q k^T / sqrt(E)) in double, (kBatch, kL, kS).
std::vector<double> softmax_weights_in_double(const Tensor& q, const Tensor& k) {
  std::vector<double> weights(size_t(kBatch * kL * kS));
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t i = 0; i < kL; ++i) {
      double* row = &weights[size_t((b * kL + i) * kS)];
      for (int64_t j = 0; j < kS; ++j) {
        double dot = 0.0;
        for (int64_t e = 0; e < kE; ++e)
          dot += double(q.data()[(b * kL + i) * kE + e]) * k.data()[(b * kS + j) * kE + e];
        row[j] = dot / std::sqrt(double(kE));
      }
      const double top = *std::max_element(row, row + kS);
      double total = 0.0;
      for (int64_t j = 0; j < kS; ++j) total += row[j] = std::exp(row[j] - top);
      for (int64_t j = 0; j < kS; ++j) row[j] /= total;
    }
  return weights;
}

// How far a float32 weight may be from softmax_weights_in_double, relative. A score is the sum
// of E products |q_e k_e| <= 1 times 1 / sqrt(E), so its magnitudes sum to at most sqrt(E):
// the sum's E roundings, the scale's and the product's leave it within (E + 2) sqrt(E) u. A
// weight exp(s_j - top) / sum_i exp(s_i - top) moves with its own score and the largest other:
// twice that, relative; the float subtraction s_j - top (at most 2 sqrt(E)) adds 2 sqrt(E) u,
// exp, the sum and the division a few u (4 here). Twice the total, 8e-6: weights of
// dropout_p = 0 off by 1e-5 fail.
constexpr double kSqrtE = 2.8285;  // > sqrt(8)
constexpr double kWeightRtol = 2 * (2 * (kE + 2) * kSqrtE + 2 * kSqrtE + 4) * kU;

// plain times the mask dropout(p) draws from `stream` over plain's shape.
Tensor with_mask_drawn(const Tensor& plain, double p, Generator stream) {
  return plain * dropout(Tensor::ones(plain.shape()), p, true, stream);
}

// q and k drawn from a seeded stream, which then serves dropout, and their weights without it.
struct Operands {
  explicit Operands(uint64_t seed) : gen(seed) {
    q = Tensor::rand({2, 3, kL, kE}, gen, -1.0f, 1.0f);
    k = Tensor::rand({2, 3, kS, kE}, gen, -1.0f, 1.0f);
    plain = attention_weights(q, k, {});
  }
  Generator gen;
  Tensor q, k, plain;
};

}  // namespace

TEST_CASE("scaled_dot_product_attention with dropout_p = 0 weighs by the plain softmax", "[attention]") {
  Operands in(41);
  const std::vector<double> expected = softmax_weights_in_double(in.q, in.k);
  for (Generator* stream : {static_cast<Generator*>(nullptr), &in.gen}) {
    const Tensor weights = attention_weights(in.q, in.k, {.dropout_p = 0.0, .generator = stream});
    REQUIRE(weights.numel() == int64_t(expected.size()));
    for (size_t i = 0; i < expected.size(); ++i)
      if (std::abs(weights.data()[i] - expected[i]) > kWeightRtol * expected[i])
        FAIL("weight " << i << " is " << weights.data()[i] << ", softmax gives " << expected[i]);
  }
}

TEST_CASE(
    "scaled_dot_product_attention's dropout zeroes each weight with probability p, scales the rest by "
    "1 / (1 - p)",
    "[attention]") {
  // p = 0.25 tells dropping with probability p from keeping with it, and 1 / (1 - p) from 1 / p.
  const double p = 0.25;
  Operands in(43);
  const Tensor dropped = attention_weights(in.q, in.k, {.dropout_p = p, .generator = &in.gen});
  const int64_t zeros = minidl::testing::count_dropped(dropped, in.plain, p);
  // The zeros are Binomial(n, p), n = 1536: mean n p = 384, sigma sqrt(n p (1 - p)) = 17.
  // Six sigma leave a false failure for any seed below 2e-9; no dropout gives 0 zeros, and
  // dropping with probability 1 - p 1152.
  const double n = double(in.plain.numel()), sigma = std::sqrt(n * p * (1.0 - p));
  INFO(zeros << " of " << n << " weights dropped at p = " << p);
  CHECK(std::abs(double(zeros) - n * p) < 6.0 * sigma);
}

TEST_CASE("scaled_dot_product_attention's dropout is F.dropout of the weights, drawn from its generator",
          "[attention]") {
  // The weights times the mask dropout() draws from the same stream position.
  const double p = 0.4;
  Operands in(44);
  SECTION("its own generator") {
    const Generator replay = in.gen;
    check_close(attention_weights(in.q, in.k, {.dropout_p = p, .generator = &in.gen}),
                with_mask_drawn(in.plain, p, replay), 0, minidl::testing::kSurvivorRtol);
  }
  SECTION("none given: default_generator()") {
    manual_seed(45);
    check_close(attention_weights(in.q, in.k, {.dropout_p = p}), with_mask_drawn(in.plain, p, Generator(45)), 0,
                minidl::testing::kSurvivorRtol);
  }
}

TEST_CASE("fixtures: scaled_dot_product_attention matches PyTorch", "[attention][fixtures]") {
  const auto fixtures = minidl::testing::fixtures_of("sdpa");
  CHECK(fixtures.size() == 7);
  for (const minidl::testing::Fixture& fx : fixtures)
    minidl::testing::check_multi_call(fx, [&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{scaled_dot_product_attention(in[0], in[1], in[2], sdpa_options(fx, in))};
    });
}

TEST_CASE("scaled_dot_product_attention's gradients match finite differences", "[attention][autograd]") {
  Generator gen(36);
  const Tensor keep = Tensor::from_vector({1, 0, 1, 1, 1, 1, 0, 1, 1, 0, 0, 1}, {3, 4});
  const Tensor bias = Tensor::randn({2, 1, 3, 4}, gen);
  check_gradients(
      [&](const std::vector<Tensor>& in) {
        return scaled_dot_product_attention(in[0], in[1], in[2], {.attn_mask = AttentionMask::boolean(keep)});
      },
      {Tensor::randn({2, 2, 3, 5}, gen), Tensor::randn({2, 2, 4, 5}, gen), Tensor::randn({2, 2, 4, 3}, gen)});
  check_gradients(
      [&](const std::vector<Tensor>& in) {
        return scaled_dot_product_attention(in[0], in[1], in[2], {.attn_mask = AttentionMask::additive(in[3])});
      },
      {Tensor::randn({2, 2, 3, 5}, gen), Tensor::randn({2, 2, 4, 5}, gen), Tensor::randn({2, 2, 4, 3}, gen), bias});
  check_gradients(
      [&](const std::vector<Tensor>& in) {
        return scaled_dot_product_attention(in[0], in[1], in[2], {.is_causal = true, .scale = 0.7});
      },
      {Tensor::randn({4, 3}, gen), Tensor::randn({4, 3}, gen), Tensor::randn({4, 2}, gen)});
}

}  // namespace test_attention
