// scaled_dot_product_attention: values by hand, masks of both kinds, the causal mask, rows
// with every key masked, errors, PyTorch's fixtures (scripts/fixtures/attention.py) and
// finite differences.
#include <cmath>

#include "minidl/ops/attention.hpp"
#include "support/check.hpp"
#include "support/fixture_calls.hpp"

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
  // Equal scores: query i averages keys 0..i (PyTorch issue 108108: not bottom-right).
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
               "true), got 0.5 at flat index 0 of the mask of shape [5]"));
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, k, v, {.dropout_p = 1.5}),
                      Contains("dropout probability has to be between 0 and 1, but got 1.5"));
}

TEST_CASE("scaled_dot_product_attention's dropout draws from its generator, in every mode", "[attention]") {
  Generator gen(1), again(1);
  Tensor q = Tensor::ones({4, 2}), k = Tensor::ones({6, 2}), v = Tensor::ones({6, 3});
  Tensor a = scaled_dot_product_attention(q, k, v, {.dropout_p = 0.5, .generator = &gen});
  Tensor b = scaled_dot_product_attention(q, k, v, {.dropout_p = 0.5, .generator = &again});
  check_close(a, b, 0, 0);
  // Each weight (1/6) is kept and doubled, or dropped: every output is a multiple of 1/3.
  for (float y : a.to_vector()) CHECK(std::abs(y * 3 - std::round(y * 3)) < 1e-5);
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
