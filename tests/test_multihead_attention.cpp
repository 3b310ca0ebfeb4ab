// nn::MultiheadAttention: parameters, init and repr as PyTorch's, masks of both kinds
// (AttentionMask::ignored: true = ignored), weights, layouts, errors, PyTorch's fixtures
// (scripts/fixtures/attention.py) and finite differences.
#include <algorithm>
#include <cmath>
#include <functional>

#include "minidl/autograd/node.hpp"
#include "minidl/nn/attention/multihead_attention.hpp"
#include "support/check.hpp"
#include "support/dropped_weights.hpp"
#include "support/module_fixture.hpp"

namespace test_multihead_attention {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;
using minidl::testing::check_gradients;
using nn::MhaCall;
using nn::MultiheadAttention;
using nn::MultiheadAttentionOptions;

namespace {

// The call a fixture of scripts/fixtures/attention.py describes.
MhaCall fixture_call(const minidl::testing::Fixture& fx) {
  MhaCall call;
  const nlohmann::json& o = fx.options();
  if (o["key_padding_mask"].get<bool>()) call.key_padding_mask = AttentionMask::ignored(fx["key_padding_mask"]);
  if (o["attn_mask"] == "boolean") call.attn_mask = AttentionMask::ignored(fx["attn_mask"]);
  if (o["attn_mask"] == "additive") call.attn_mask = AttentionMask::additive(fx["attn_mask"]);
  call.need_weights = o["need_weights"];
  call.average_attn_weights = o["average_attn_weights"];
  return call;
}

float largest_magnitude(const Tensor& t) {
  float largest = 0.0f;
  for (float v : t.to_vector()) largest = std::max(largest, std::abs(v));
  return largest;
}

}  // namespace

TEST_CASE("MultiheadAttention's parameters, init and repr are PyTorch's", "[attention]") {
  Generator gen(7);
  MultiheadAttention mha(8, 2, gen);
  CHECK(minidl::testing::state_dict_keys(mha) ==
        std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
  CHECK(mha.in_proj_weight.shape() == Shape{24, 8});
  check_close(mha.in_proj_bias, std::vector<float>(24, 0.0f), 0, 0);
  check_close(mha.out_proj->bias, std::vector<float>(8, 0.0f), 0, 0);
  // xavier_uniform_: bound sqrt(6 / (fan_in + fan_out)) = sqrt(6 / 32); out_proj: 1 / sqrt(8).
  CHECK(largest_magnitude(mha.in_proj_weight) <= std::sqrt(6.0f / 32));
  CHECK(largest_magnitude(mha.out_proj->weight) <= 1 / std::sqrt(8.0f));
  CHECK(mha.repr() ==
        "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, "
        "bias=True)\n)");
  MultiheadAttention no_bias(MultiheadAttentionOptions(8, 4).bias(false), gen);
  CHECK(minidl::testing::state_dict_keys(no_bias) == std::vector<std::string>{"in_proj_weight", "out_proj.weight"});
}

TEST_CASE("fixtures: MultiheadAttention matches PyTorch, with masks, weights and layouts", "[attention][fixtures]") {
  const auto fixtures = minidl::testing::fixtures_of("MultiheadAttention");
  CHECK(fixtures.size() == 8);
  for (const minidl::testing::Fixture& fx : fixtures) {
    const nlohmann::json& o = fx.options();
    MultiheadAttention mha(MultiheadAttentionOptions(o["embed_dim"], o["num_heads"]).batch_first(o["batch_first"]));
    const MhaCall call = fixture_call(fx);
    minidl::testing::check_module_call(fx, mha, [&](const std::vector<Tensor>& in) {
      const bool self = in.size() == 1;
      const nn::MhaResult r = mha.forward(in[0], self ? in[0] : in[1], self ? in[0] : in[2], call);
      return call.need_weights ? std::vector<Tensor>{r.output, r.weights} : std::vector<Tensor>{r.output};
    });
  }
}

TEST_CASE("MultiheadAttention: masks of either kind agree, and weights are optional", "[attention]") {
  Generator gen(8);
  MultiheadAttention mha(MultiheadAttentionOptions(6, 3).batch_first(true), gen);
  const Tensor x = Tensor::randn({2, 4, 6}, gen);
  const Tensor padding = Tensor::from_vector({0, 0, 0, 1, 0, 0, 1, 1}, {2, 4});
  const Tensor minus_inf = Tensor::from_vector({0, 0, 0, -INFINITY, 0, 0, -INFINITY, -INFINITY}, {2, 4});
  const nn::MhaResult boolean = mha.forward(x, x, x, {.key_padding_mask = AttentionMask::ignored(padding)});
  const nn::MhaResult additive = mha.forward(x, x, x, {.key_padding_mask = AttentionMask::additive(minus_inf)});
  check_close(boolean.output, additive.output, 0, 0);
  CHECK(boolean.weights.shape() == Shape{2, 4, 4});
  check_close(narrow(narrow(boolean.weights, 0, 1, 1), 2, 2, 2), std::vector<float>(8, 0.0f), 0, 0);  // ignored keys
  const nn::MhaResult no_weights =
      mha.forward(x, x, x, {.key_padding_mask = AttentionMask::ignored(padding), .need_weights = false});
  CHECK(!no_weights.weights.defined());
  check_close(no_weights.output, boolean.output, 1e-6, 1e-5);
  check_close(mha.forward(x), mha.forward(x, x, x).output, 0, 0);
  // is_causal is a hint: the attn_mask given is what applies.
  const Tensor causal = triu(Tensor::ones({4, 4}), 1);
  check_close(mha.forward(x, x, x, {.attn_mask = AttentionMask::ignored(causal), .is_causal = true}).output,
              mha.forward(x, x, x, {.attn_mask = AttentionMask::ignored(causal)}).output, 0, 0);
}

TEST_CASE("MultiheadAttention: a query with every key ignored gives zeros, with weights or without, as SDPA 2.5+",
          "[attention]") {
  Generator gen(9);
  MultiheadAttention mha(4, 2, gen);
  const Tensor x = Tensor::randn({3, 4}, gen);  // unbatched (L, E)
  const AttentionMask all_ignored = AttentionMask::ignored(Tensor::ones({3}));
  const Tensor out_proj_of_zeros = mha.out_proj->bias.reshape({1, 4}) * Tensor::ones({3, 1});
  for (bool weights : {true, false}) {
    const nn::MhaResult r = mha.forward(x, x, x, {.key_padding_mask = all_ignored, .need_weights = weights});
    check_close(r.output, out_proj_of_zeros, 0, 0);
    if (weights) check_close(r.weights, std::vector<float>(9, 0.0f), 0, 0);
  }
}

TEST_CASE("MultiheadAttention: self-attention without weights runs the packed op, as SDPA would", "[attention]") {
  Generator gen(11);
  MultiheadAttention mha(MultiheadAttentionOptions(6, 3).batch_first(true), gen);
  const Tensor x = Tensor::randn({2, 4, 6}, gen);
  const AttentionMask causal = AttentionMask::ignored(triu(Tensor::ones({4, 4}), 1));
  // Whether self_attention_packed is among the ops y's graph recorded.
  const std::function<bool(const Node*)> recorded = [&](const Node* node) {
    if (!node) return false;
    if (node->name == "SelfAttentionPacked") return true;
    for (const auto& input : node->inputs)
      if (input && recorded(input->grad_fn.get())) return true;
    return false;
  };
  const auto made_by_packed_op = [&](const Tensor& y) { return recorded(y.grad_fn().get()); };
  for (bool is_causal : {true, false}) {
    INFO("is_causal " << is_causal);
    const MhaCall packed{
        .need_weights = false, .attn_mask = is_causal ? causal : AttentionMask(), .is_causal = is_causal};
    const Tensor fast = mha.forward(x, x, x, packed).output;
    CHECK(made_by_packed_op(fast));
    const nn::MhaResult sdpa = mha.forward(x, x, x, {.attn_mask = is_causal ? causal : AttentionMask()});
    CHECK(!made_by_packed_op(sdpa.output));
    check_close(fast, sdpa.output, 1e-6, 1e-5);
  }
  CHECK(!made_by_packed_op(mha.forward(x, x * 1.0f, x, {.need_weights = false}).output));  // not one tensor
}

TEST_CASE("MultiheadAttention refuses bad options, shapes and masks, naming them", "[attention]") {
  REQUIRE_THROWS_WITH(MultiheadAttention(6, 4), Contains("MultiheadAttention: expected embed_dim divisible by "
                                                         "num_heads (both positive), got embed_dim=6, num_heads=4"));
  REQUIRE_THROWS_WITH(MultiheadAttention(MultiheadAttentionOptions(4, 2).dropout(2.0)),
                      Contains("dropout probability has to be between 0 and 1, but got 2"));
  MultiheadAttention mha(4, 2);
  const Tensor x = Tensor::zeros({3, 2, 4});
  REQUIRE_THROWS_WITH(mha.forward(Tensor::zeros({4}), x, x),
                      Contains("MultiheadAttention: expected query, key and value all of rank 3 (batched) or all of "
                               "rank 2 (unbatched), got query [4], key [3, 2, 4], value [3, 2, 4]"));
  REQUIRE_THROWS_WITH(mha.forward(x, x, Tensor::zeros({3, 2, 5})),
                      Contains("MultiheadAttention: expected query (L, N, E) and key and value (S, N, E) (or unbatched "
                               "(L, E), (S, E)) with E = embed_dim = 4 (kdim and vdim are not supported), got query "
                               "[3, 2, 4], key [3, 2, 4], value [3, 2, 5]"));
  REQUIRE_THROWS_WITH(mha.forward(x, x, Tensor::zeros({3, 1, 4})), Contains("value [3, 1, 4]"));
  REQUIRE_THROWS_WITH(mha.forward(x, x, x, {.key_padding_mask = AttentionMask::ignored(Tensor::zeros({3, 2}))}),
                      Contains("MultiheadAttention: expected key_padding_mask of shape (N, S) = [2, 3], got [3, 2]"));
  REQUIRE_THROWS_WITH(mha.forward(x, x, x, {.attn_mask = AttentionMask::additive(Tensor::zeros({2, 3, 3}))}),
                      Contains("MultiheadAttention: expected attn_mask of shape (L, S) = [3, 3] or (N * num_heads, L, "
                               "S) = [4, 3, 3], got [2, 3, 3]"));
  REQUIRE_THROWS_WITH(mha.forward(x, x, x, {.is_causal = true}),
                      Contains("MultiheadAttention: Need attn_mask if specifying the is_causal hint."));
  REQUIRE_THROWS_WITH(mha.forward(x, x, x, {.attn_mask = AttentionMask::ignored(Tensor::full({3, 3}, 2.0f))}),
                      Contains("attention: expected a boolean mask of 0s and 1s (minidl's masks are float32, 1 for "
                               "true = ignored), got 2 at flat index 0 of the mask of shape [3, 3]"));
}

TEST_CASE("MultiheadAttention drops attention weights in training only", "[attention]") {
  Generator gen(10);
  MultiheadAttention mha(MultiheadAttentionOptions(4, 2).dropout(0.5), gen);
  const Tensor x = Tensor::randn({5, 1, 4}, gen);
  const nn::MhaResult train = mha.forward(x, x, x, {.average_attn_weights = false});
  int zeros = 0;
  for (float w : train.weights.to_vector()) zeros += w == 0.0f;
  CHECK(zeros > 0);
  mha.eval();
  check_close(sum(mha.forward(x, x, x).weights, {-1}), std::vector<float>(5, 1.0f), 1e-6, 0);
}

namespace {

float max_abs_difference(const Tensor& a, const Tensor& b) { return largest_magnitude(a - b); }

// How far need_weights = false's output may be from need_weights = true's with the same
// dropout mask. Both multiply the same dropped weights into the same values, so only sums
// taken in another order can move an output: a head sums S weighted values (the weights sum
// to at most 1 / (1 - p), each value is below v_max = E max|x| max|in_proj_weight|, the bias
// being 0), off by at most S u v_max / (1 - p); out_proj sums E of them times weights below
// w_max = max|out_proj.weight|, carrying E w_max times that, and rounds E u times its terms'
// magnitudes, E w_max v_max / (1 - p), once more. Twice the total.
double need_weights_paths_atol(const MultiheadAttention& mha, const Tensor& x, int64_t S, double p) {
  const double E = double(mha.options().embed_dim), u = minidl::testing::kUnitRoundoff;
  const double v_max = E * largest_magnitude(x) * largest_magnitude(mha.in_proj_weight);
  const double w_max = largest_magnitude(mha.out_proj->weight);
  return 2 * (E * w_max * double(S) * u * v_max + E * u * E * w_max * v_max) / (1.0 - p);
}

}  // namespace

TEST_CASE("MultiheadAttention without weights drops attention weights in training as with them", "[attention]") {
  const double p = 0.25;
  const int64_t S = 6;
  Generator gen(12);
  MultiheadAttention mha(MultiheadAttentionOptions(8, 2).dropout(p), gen);
  const Tensor x = Tensor::randn({S, 2, 8}, gen);
  const MhaCall with_weights{.average_attn_weights = false}, without_weights{.need_weights = false};
  // Both paths draw the mask, over (N, H, L, S), from default_generator(): the same stream
  // position gives the same mask.
  manual_seed(13);
  const nn::MhaResult dropped = mha.forward(x, x, x, with_weights);
  manual_seed(13);
  const Tensor dropped_without_weights = mha.forward(x, x, x, without_weights).output;
  mha.eval();
  const nn::MhaResult plain = mha.forward(x, x, x, with_weights);
  const Tensor plain_without_weights = mha.forward(x, x, x, without_weights).output;
  // The weights were dropped (144 of them at p = 0.25: none zeroed has probability 1e-18).
  const int64_t zeros = minidl::testing::count_dropped(dropped.weights, plain.weights, p);
  CHECK(zeros > 0);
  const double atol = need_weights_paths_atol(mha, x, S, p);
  INFO("bound on the paths' difference " << atol);
  check_close(dropped_without_weights, dropped.output, atol, 0);
  CHECK(max_abs_difference(dropped_without_weights, plain_without_weights) > atol);
  // In eval both paths weigh by the plain softmax: that of the same parameters without dropout.
  check_close(plain_without_weights, plain.output, atol, 0);
  // The same draws give the same parameters, and the same computation the same weights exactly.
  Generator same_draws(12);
  MultiheadAttention without_dropout(MultiheadAttentionOptions(8, 2), same_draws);
  check_close(without_dropout.forward(x, x, x, with_weights).weights, plain.weights, 0, 0);
}

TEST_CASE("MultiheadAttention's input gradients match finite differences", "[attention][autograd]") {
  Generator gen(11);
  MultiheadAttention mha(MultiheadAttentionOptions(4, 2).batch_first(true), gen);
  const AttentionMask padding = AttentionMask::ignored(Tensor::from_vector({0, 0, 1, 0, 0, 0}, {2, 3}));
  check_gradients(
      [&](const std::vector<Tensor>& in) {
        const nn::MhaResult r = mha.forward(in[0], in[1], in[2], {.key_padding_mask = padding});
        return cat({r.output.reshape({-1}), r.weights.reshape({-1})});
      },
      {Tensor::randn({2, 2, 4}, gen), Tensor::randn({2, 3, 4}, gen), Tensor::randn({2, 3, 4}, gen)});
}

}  // namespace test_multihead_attention
