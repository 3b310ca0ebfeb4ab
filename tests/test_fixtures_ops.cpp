// minidl's log_softmax against PyTorch 1.13 on the fixtures of scripts/fixtures/ops.py, and
// a check that every fixture file belongs to a module some test compares. (Linear, Tanh,
// ReLU, cross_entropy and SGD fixtures are compared in their own tests; the norm layers'
// in test_fixtures_norm.cpp.) Values within 1e-5 absolute or 1e-4 relative.
#include <catch2/catch.hpp>

#include "minidl/minidl.hpp"
#include "support/fixture.hpp"

namespace test_fixtures_ops {

using namespace minidl;
using minidl::testing::check_call;
using minidl::testing::Fixture;
using minidl::testing::fixtures_of;

TEST_CASE("fixtures: log_softmax matches PyTorch on every dim, and on large logits", "[fixtures]") {
  for (const Fixture& fx : fixtures_of("log_softmax")) {
    DYNAMIC_SECTION(fx.name()) {
      const int64_t dim = fx.options().at("dim");
      check_call(fx, "", [&](const Tensor& x) { return log_softmax(x, dim); });
    }
  }
}

TEST_CASE("fixtures: every fixture file belongs to a module the tests compare", "[fixtures]") {
  const std::vector<std::string> compared = {
      "Linear",  // test_nn_linear.cpp
      "Tanh",
      "ReLU",         // test_nn_activation.cpp
      "log_softmax",  // here
      "matmul",       // test_ops_matmul.cpp
      "transpose",    // test_ops_shape.cpp
      "cross_entropy",
      "cross_entropy_nd",  // test_cross_entropy.cpp
      "SGD",               // test_sgd.cpp
      "BatchNorm1d",
      "BatchNorm2d",
      "LayerNorm",
      "RMSNorm",
      "DyT",
      "GroupNorm",  // test_fixtures_norm.cpp
      "Conv2d",
      "MaxPool2d",
      "AvgPool2d",
      "AdaptiveAvgPool2d",
      "Flatten",  // test_conv.cpp
      "GELU",
      "SiLU",  // test_nn_gelu_silu.cpp
      "PreNormBlock",
      "PostNormBlock",
      "Residual",  // test_nn_residual.cpp
      "Adam",
      "AdamW",  // test_adam.cpp
      "clip_grad_norm_",
      "clip_grad_value_",  // test_clip_grad.cpp
      "softmax",           // test_ops_softmax.cpp
      "masked_fill",
      "tril",
      "triu",  // test_ops_masking.cpp
      "cat",
      "stack",
      "split",
      "chunk",
      "narrow",
      "slice",
      "permute",
      "matmul_attention",    // test_ops_join.cpp
      "topk",                // test_ops_sampling.cpp
      "embedding",           // test_embedding.cpp
      "sdpa",                // test_attention.cpp
      "MultiheadAttention",  // test_multihead_attention.cpp
      "TransformerEncoderLayer",
      "TransformerEncoder",     // test_transformer.cpp
      "packed_self_attention",  // test_packed_attention.cpp
  };
  const std::vector<std::string> names = testing::fixture_names();
  CHECK(names.size() >= 80);
  for (const std::string& name : names) {
    const Fixture fx(name);
    INFO(name << " names module '" << fx.module() << "'");
    CHECK(std::find(compared.begin(), compared.end(), fx.module()) != compared.end());
  }
}

}  // namespace test_fixtures_ops
