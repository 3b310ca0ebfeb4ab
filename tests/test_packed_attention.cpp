// self_attention_packed: against the composite it replaces (split, permute, SDPA, merge) in
// values and gradients, its weights, PyTorch's fixtures (scripts/fixtures/attention.py),
// finite differences and its errors.
#include <cmath>

#include "minidl/ops/attention.hpp"
#include "minidl/ops/join.hpp"
#include "minidl/ops/packed_attention.hpp"
#include "minidl/ops/reduce.hpp"
#include "minidl/ops/shape_ops.hpp"
#include "support/check.hpp"
#include "support/fixture_calls.hpp"

namespace test_packed_attention {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

namespace {

// nanoGPT's way, in minidl's composite ops: qkv (B, T, 3C) -> (B, T, C).
Tensor split_permute_merge(const Tensor& qkv, int64_t heads, bool is_causal) {
  const int64_t b = qkv.size(0), t = qkv.size(1), c = qkv.size(2) / 3;
  std::vector<Tensor> parts = split(qkv, c, -1);
  for (Tensor& p : parts) p = permute(p.reshape({b, t, heads, c / heads}), {0, 2, 1, 3});  // (B, H, T, D)
  const Tensor y = scaled_dot_product_attention(parts[0], parts[1], parts[2], {.is_causal = is_causal});
  return permute(y, {0, 2, 1, 3}).reshape({b, t, c});
}

}  // namespace

TEST_CASE("self_attention_packed equals split, permute, SDPA and merge, in values and gradients", "[attention]") {
  Generator gen(35);
  for (bool causal : {true, false}) {
    INFO("is_causal " << causal);
    Tensor qkv = Tensor::randn({3, 7, 3 * 12}, gen).requires_grad_(true);
    const Tensor upstream = Tensor::randn({3, 7, 12}, gen);
    const Tensor fused = self_attention_packed(qkv, 4, causal);
    fused.backward(upstream);
    const Tensor fused_grad = qkv.grad();
    qkv.zero_grad();
    const Tensor reference = split_permute_merge(qkv, 4, causal);
    reference.backward(upstream);
    // The same sums in another order (one sgemm with alpha = scale against a product then a
    // scaling): float32 rounding only.
    check_close(fused, reference.detach(), 1e-5, 1e-4);
    check_close(fused_grad, qkv.grad(), 1e-5, 1e-4);
  }
}

TEST_CASE("self_attention_packed's weights: causal rows of a softmax, (B, H, T, T)", "[attention]") {
  Generator gen(36);
  Tensor weights;
  self_attention_packed(Tensor::randn({2, 5, 3 * 6}, gen), 3, true, &weights);
  REQUIRE(weights.shape() == Shape{2, 3, 5, 5});
  const std::vector<float> w = weights.to_vector();
  for (int64_t row = 0; row < 2 * 3 * 5; ++row) {
    const int64_t i = row % 5;
    double total = 0.0;
    for (int64_t j = 0; j < 5; ++j) {
      const float v = w[size_t(row * 5 + j)];
      if (j > i) CHECK(v == 0.0f);  // a later position: exactly no weight
      total += v;
    }
    CHECK(std::abs(total - 1.0) < 1e-6);
  }
}

TEST_CASE("fixtures: self_attention_packed matches PyTorch's nanoGPT attention", "[attention][fixtures]") {
  const auto fixtures = minidl::testing::fixtures_of("packed_self_attention");
  CHECK(fixtures.size() == 3);
  for (const minidl::testing::Fixture& fx : fixtures)
    minidl::testing::check_multi_call(fx, [&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{
          self_attention_packed(in[0], fx.options()["num_heads"].get<int64_t>(), fx.options()["is_causal"])};
    });
}

TEST_CASE("self_attention_packed's gradients match finite differences", "[attention][autograd]") {
  Generator gen(37);
  for (bool causal : {true, false})
    check_gradients([&](const std::vector<Tensor>& in) { return self_attention_packed(in[0], 2, causal); },
                    {Tensor::randn({2, 4, 3 * 6}, gen)});
}

TEST_CASE("self_attention_packed refuses a qkv that does not pack heads, naming shape and heads", "[attention]") {
  const auto refused = [](const Shape& shape, int64_t heads) {
    return Catch::Matchers::Equals(
        "self_attention_packed: expected qkv (B, T, 3C) with num_heads dividing C, got qkv of shape " +
        to_string(shape) + " and num_heads " + std::to_string(heads));
  };
  CHECK_THROWS_WITH(self_attention_packed(Tensor::zeros({4, 3 * 8}), 2, true), refused({4, 24}, 2));
  CHECK_THROWS_WITH(self_attention_packed(Tensor::zeros({1, 4, 25}), 1, true), refused({1, 4, 25}, 1));
  CHECK_THROWS_WITH(self_attention_packed(Tensor::zeros({1, 4, 24}), 3, true), refused({1, 4, 24}, 3));
  CHECK_THROWS_WITH(self_attention_packed(Tensor::zeros({1, 4, 24}), 0, true), refused({1, 4, 24}, 0));
}

TEST_CASE("self_attention_packed with a cache: one position at a time, or a few, gives the full causal call",
          "[attention]") {
  Generator gen(36);
  const Tensor qkv = Tensor::randn({2, 6, 3 * 8}, gen);  // (B, T, 3C), C = 8
  const Tensor full = self_attention_packed(qkv, 2, true);
  LayerCache one_by_one;
  std::vector<Tensor> steps;
  for (int64_t t = 0; t < 6; ++t) steps.push_back(self_attention_packed(narrow(qkv, 1, t, 1), 2, one_by_one));
  CHECK(one_by_one.length() == 6);
  // One query row against the cache's keys is another sgemm shape than the (T, T) block: the
  // sums may round differently, within float32's few ulps.
  check_close(cat(steps, 1), full, 1e-6, 1e-5);
  LayerCache prompt_then_rest;  // a prompt of 4 positions, then 2 more: aligned bottom-right
  self_attention_packed(narrow(qkv, 1, 0, 4), 2, prompt_then_rest);
  const Tensor rest = self_attention_packed(narrow(qkv, 1, 4, 2), 2, prompt_then_rest);
  check_close(rest, narrow(full, 1, 4, 2), 1e-6, 1e-5);
}

TEST_CASE("self_attention_packed with a cache refuses a graph and a qkv unlike the cache's", "[attention]") {
  LayerCache cache;
  CHECK_THROWS_WITH(self_attention_packed(Tensor::zeros({1, 1, 24}).requires_grad_(true), 2, cache),
                    Contains("self_attention_packed with a cache: generation records no graph; call it under "
                             "NoGradGuard"));
  self_attention_packed(Tensor::zeros({1, 1, 24}), 2, cache);
  CHECK_THROWS_WITH(self_attention_packed(Tensor::zeros({2, 1, 24}), 2, cache),
                    Contains("self_attention_packed: expected qkv (B, L, 3C) with the cache's B and 3C, got qkv of "
                             "shape [2, 1, 24] and a cache of shape [1, 1, 24]"));
}

}  // namespace test_packed_attention
