// nn::TransformerEncoderLayer, nn::TransformerEncoder and generate_square_subsequent_mask:
// structure and names as PyTorch's, post- and pre-norm, masks, errors, PyTorch's fixtures
// (scripts/fixtures/attention.py) and finite differences.
#include <cmath>

#include "minidl/nn/transformer.hpp"
#include "support/check.hpp"
#include "support/module_fixture.hpp"

namespace test_transformer {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;
using minidl::testing::check_gradients;
using nn::TransformerEncoderLayerOptions;

namespace {

TransformerEncoderLayerOptions fixture_layer_options(const nlohmann::json& o) {
  return TransformerEncoderLayerOptions(o["d_model"], o["nhead"])
      .dim_feedforward(o["dim_feedforward"])
      .dropout(o["dropout"])
      .activation(o["activation"])
      .batch_first(o["batch_first"])
      .norm_first(o["norm_first"]);
}

// The masks a fixture names: its causal mask is a float one, its boolean masks 1 = ignored.
std::pair<AttentionMask, AttentionMask> fixture_masks(const minidl::testing::Fixture& fx) {
  const std::string kind = fx.options()["src_mask"];
  const AttentionMask mask = kind == "causal"    ? AttentionMask::additive(fx["attn_mask"])
                             : kind == "boolean" ? AttentionMask::ignored(fx["attn_mask"])
                                                 : AttentionMask();
  const bool padded = fx.options()["src_key_padding_mask"];
  return {mask, padded ? AttentionMask::ignored(fx["key_padding_mask"]) : AttentionMask()};
}

}  // namespace

TEST_CASE("generate_square_subsequent_mask: -inf above the diagonal, 0 elsewhere", "[transformer]") {
  const float inf = INFINITY;
  const std::vector<float> expected = {0, -inf, -inf, 0, 0, -inf, 0, 0, 0};
  CHECK(nn::generate_square_subsequent_mask(3).to_vector() == expected);
  CHECK(nn::generate_square_subsequent_mask(0).shape() == Shape{0, 0});
  REQUIRE_THROWS_WITH(nn::generate_square_subsequent_mask(-1),
                      Contains("generate_square_subsequent_mask: expected a size >= 0, got -1"));
}

TEST_CASE("TransformerEncoderLayer's children, state_dict and repr are PyTorch's", "[transformer]") {
  nn::TransformerEncoderLayer layer(TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  std::vector<std::string> children;
  for (const auto& [name, child] : layer.named_children()) children.push_back(name);
  CHECK(children == std::vector<std::string>{"self_attn", "linear1", "dropout", "linear2", "norm1", "norm2", "dropout1",
                                             "dropout2"});
  CHECK(minidl::testing::state_dict_keys(layer) ==
        std::vector<std::string>{"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                                 "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
                                 "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"});
  CHECK(layer.dropout->p() == 0.1);
  nn::TransformerEncoderLayer no_bias(TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).bias(false));
  CHECK(minidl::testing::state_dict_keys(no_bias) ==
        std::vector<std::string>{"self_attn.in_proj_weight", "self_attn.out_proj.weight", "linear1.weight",
                                 "linear2.weight", "norm1.weight", "norm2.weight"});
}

TEST_CASE("fixtures: TransformerEncoderLayer matches PyTorch, post- and pre-norm, relu and gelu, with masks",
          "[transformer][fixtures]") {
  const auto fixtures = minidl::testing::fixtures_of("TransformerEncoderLayer");
  CHECK(fixtures.size() == 4);
  for (const minidl::testing::Fixture& fx : fixtures) {
    nn::TransformerEncoderLayer layer(fixture_layer_options(fx.options()));
    layer.eval();
    const auto [mask, padding] = fixture_masks(fx);
    minidl::testing::check_module_call(fx, layer, [&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{layer.forward(in[0], mask, padding)};
    });
  }
}

TEST_CASE("fixtures: a pre-norm TransformerEncoder with a final norm matches PyTorch", "[transformer][fixtures]") {
  const auto fixtures = minidl::testing::fixtures_of("TransformerEncoder");
  REQUIRE(fixtures.size() == 1);
  const minidl::testing::Fixture& fx = fixtures[0];
  nn::TransformerEncoder encoder(fixture_layer_options(fx.options()), fx.options()["num_layers"],
                                 std::make_shared<nn::LayerNorm>(8));
  encoder.eval();
  const auto [mask, padding] = fixture_masks(fx);
  minidl::testing::check_module_call(fx, encoder, [&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{encoder.forward(in[0], mask, padding, true)};
  });
}

TEST_CASE("TransformerEncoder's layers start as copies of the first, as PyTorch's deep copies", "[transformer]") {
  Generator gen(3), same(3);
  nn::TransformerEncoder encoder(TransformerEncoderLayerOptions(4, 2).dim_feedforward(8), 3, nullptr, gen);
  const nn::StateDict first = encoder.layers->at<nn::TransformerEncoderLayer>(0).state_dict(),
                      third = encoder.layers->at<nn::TransformerEncoderLayer>(2).state_dict();
  for (size_t i = 0; i < first.size(); ++i) check_close(third[i].value, first[i].value, 0, 0);
  CHECK(!encoder.layers->at<nn::TransformerEncoderLayer>(0).linear1->weight.same(
      encoder.layers->at<nn::TransformerEncoderLayer>(2).linear1->weight));  // copies, not shared
  // Only the first layer drew from gen: one layer built from the same seed is that layer.
  nn::TransformerEncoderLayer one(TransformerEncoderLayerOptions(4, 2).dim_feedforward(8), same);
  check_close(one.linear2->weight, encoder.layers->at<nn::TransformerEncoderLayer>(1).linear2->weight, 0, 0);
  CHECK(minidl::testing::state_dict_keys(encoder).front() == "layers.0.self_attn.in_proj_weight");
  CHECK(minidl::testing::state_dict_keys(encoder).back() == "layers.2.norm2.bias");
}

TEST_CASE("TransformerEncoderLayer and TransformerEncoder refuse bad options, naming them", "[transformer]") {
  REQUIRE_THROWS_WITH(nn::TransformerEncoderLayer(TransformerEncoderLayerOptions(8, 2).activation("tanh")),
                      Contains("TransformerEncoderLayer: activation should be relu/gelu, not tanh"));
  REQUIRE_THROWS_WITH(nn::TransformerEncoder(TransformerEncoderLayerOptions(8, 2), 0),
                      Contains("TransformerEncoder: expected num_layers >= 1, got 0"));
  nn::TransformerEncoderLayer layer(TransformerEncoderLayerOptions(4, 2).dim_feedforward(8));
  REQUIRE_THROWS_WITH(layer.forward(Tensor::zeros({3, 1, 4}), AttentionMask(), AttentionMask(), true),
                      Contains("Need attn_mask if specifying the is_causal hint"));
  // The stack's "layers" child is PyTorch's ModuleList: a container without a forward.
  nn::TransformerEncoder encoder(TransformerEncoderLayerOptions(4, 2).dim_feedforward(8), 1);
  CHECK(encoder.named_children()[0].second->type_name() == "ModuleList");
  REQUIRE_THROWS_WITH(encoder.named_children()[0].second->forward(Tensor::zeros({3, 1, 4})),
                      Contains("ModuleList: it has no forward; call its modules one by one"));
}

TEST_CASE("TransformerEncoderLayer drops out in training only", "[transformer]") {
  Generator gen(4);
  nn::TransformerEncoderLayer layer(TransformerEncoderLayerOptions(4, 2).dim_feedforward(8).dropout(0.5), gen);
  const Tensor x = Tensor::randn({3, 2, 4}, gen);
  layer.eval();
  check_close(layer.forward(x), layer.forward(x), 0, 0);
  layer.train();
  CHECK(layer.forward(x).to_vector() != layer.forward(x).to_vector());
}

TEST_CASE("TransformerEncoderLayer's input gradient matches finite differences, pre- and post-norm",
          "[transformer][autograd]") {
  for (bool norm_first : {false, true}) {
    Generator gen(5);
    nn::TransformerEncoderLayer layer(
        TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0).activation("gelu").norm_first(norm_first),
        gen);
    const AttentionMask causal = AttentionMask::additive(nn::generate_square_subsequent_mask(3));
    check_gradients([&](const std::vector<Tensor>& in) { return layer.forward(in[0], causal); },
                    {Tensor::randn({3, 2, 4}, gen)});
  }
}

}  // namespace test_transformer
