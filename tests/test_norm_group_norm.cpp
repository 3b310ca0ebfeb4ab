// GroupNorm and the fused group_norm op: a plain-loop reference (G = 1 is a LayerNorm
// over each example, G = C a per-channel one), finite differences, the composite version.
#include "support/check.hpp"
#include "support/norm_reference.hpp"

namespace test_norm_group_norm {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;
using minidl::testing::random_normal;

namespace {

// Each group of C / G channels of each example normalized by a plain loop, then the
// per-channel weight and bias.
Tensor group_norm_reference(const Tensor& x, int64_t groups, double eps, const Tensor& weight, const Tensor& bias) {
  const int64_t n = x.size(0), c = x.size(1), positions = x.numel() / (n * c);
  Tensor y = minidl::testing::row_normalize_reference(x, c / groups * positions, true, eps, Tensor(), Tensor());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < positions; ++s) {
        float& v = y.data()[(i * c + ch) * positions + s];
        if (weight.defined()) v *= weight.data()[ch];
        if (bias.defined()) v += bias.data()[ch];
      }
  return y;
}

}  // namespace

TEST_CASE("GroupNorm matches a plain loop for G = 1, G = C and between", "[norm][group_norm]") {
  for (Shape shape : {Shape{3, 6}, Shape{2, 6, 5}, Shape{2, 6, 3, 4}}) {
    for (int64_t groups : {1, 2, 3, 6}) {
      INFO("shape " << to_string(shape) << " groups " << groups);
      nn::GroupNorm gn(groups, 6);
      gn.weight.detach().copy_(random_normal({6}, 1, 1.0f, 0.5f));
      gn.bias.detach().copy_(random_normal({6}, 2));
      Tensor x = random_normal(shape, 3, 2.0f, 3.0f);
      Tensor expected = group_norm_reference(x, groups, 1e-5, gn.weight, gn.bias);
      check_close(gn(x), expected, 2e-5, 1e-5);
      gn.eval();
      check_close(gn(x), expected, 2e-5, 1e-5);
    }
  }
  // G = 1 is a LayerNorm over everything but the batch dim, without per-position affine.
  Tensor x = random_normal({4, 6, 5}, 4);
  check_close(nn::GroupNorm(1, 6)(x), layer_norm(x, {6, 5}, Tensor(), Tensor()), 1e-6, 1e-5);
  // G = C normalizes each channel of each example on its own.
  check_close(nn::GroupNorm(6, 6)(x), layer_norm(x, {5}, Tensor(), Tensor()), 1e-6, 1e-5);
}

TEST_CASE("GroupNorm parameters and repr match PyTorch's", "[norm][group_norm]") {
  nn::GroupNorm gn(8, 64);
  CHECK(minidl::testing::parameter_count(gn) == 128);
  CHECK(gn.named_buffers().empty());
  nn::StateDict state = gn.state_dict();
  REQUIRE(state.size() == 2);
  CHECK(state[0].name == "weight");
  CHECK(state[1].name == "bias");
  CHECK(gn.repr() == "GroupNorm(8, 64, eps=1e-05, affine=True)");
  nn::GroupNorm plain(nn::GroupNormOptions{.num_groups = 2, .num_channels = 4, .eps = 0.001, .affine = false});
  CHECK(plain.repr() == "GroupNorm(2, 4, eps=0.001, affine=False)");
  CHECK(plain.parameters().empty());
  Tensor x = random_normal({2, 4, 3}, 5, 1.0f, 2.0f);
  check_close(plain(x), group_norm_reference(x, 2, 0.001, Tensor(), Tensor()), 2e-5, 1e-5);
}

TEST_CASE("GroupNorm input, weight and bias gradients match finite differences", "[norm][group_norm]") {
  for (Shape shape : {Shape{3, 6}, Shape{2, 6, 4}, Shape{2, 6, 2, 3}}) {
    for (int64_t groups : {1, 3, 6}) {
      for (bool training : {true, false}) {
        INFO("shape " << to_string(shape) << " groups " << groups << " training " << training);
        nn::GroupNorm gn(groups, 6);
        gn.train(training);
        auto f = [&](const std::vector<Tensor>& in) {
          gn.weight = in[1];
          gn.bias = in[2];
          return gn(in[0]);
        };
        check_gradients(f, {random_normal(shape, 61), random_normal({6}, 62, 1.0f, 0.3f), random_normal({6}, 63)});
      }
    }
  }
}

TEST_CASE("GroupNorm fused op and composite agree in forward and backward", "[norm][group_norm]") {
  for (Shape shape : {Shape{64, 64}, Shape{4, 8, 6}, Shape{2, 8, 3, 5}}) {
    for (int64_t groups : {1, 4, 8}) {
      auto fused = [&](const std::vector<Tensor>& in) { return group_norm(in[0], groups, in[1], in[2]); };
      auto comp = [&](const std::vector<Tensor>& in) { return composite::group_norm(in[0], groups, in[1], in[2]); };
      const int64_t c = shape[1];
      std::vector<Tensor> inputs{random_normal(shape, 71, 0.5f, 2.0f), random_normal({c}, 72), random_normal({c}, 73)};
      auto a = minidl::testing::gradients(fused, inputs), b = minidl::testing::gradients(comp, inputs);
      for (size_t i = 0; i < a.size(); ++i) {
        INFO("shape " << to_string(shape) << " groups " << groups << " result " << i
                      << " (0 = output, then dx, dweight, dbias)");
        check_close(a[i], b[i], 1e-5, 1e-5);
      }
    }
  }
}

TEST_CASE("GroupNorm normalizes inputs with mean 1e4 and std 1e-1", "[norm][group_norm]") {
  Tensor x = random_normal({2, 4, 64}, 81, 1e4f, 0.1f);
  check_close(nn::GroupNorm(2, 4)(x), group_norm_reference(x, 2, 1e-5, Tensor(), Tensor()), 1e-5, 1e-5);
}

TEST_CASE("GroupNorm refuses one value per group, as PyTorch", "[norm][group_norm]") {
  // F.group_norm checks (N * C / G) * positions > 1 in training and eval alike and names
  // [N * C / G, G, positions...].
  REQUIRE_THROWS_WITH(nn::GroupNorm(4, 4)(Tensor::zeros({1, 4})),
                      Catch::Contains("Expected more than 1 value per channel when training, got input size [1, 4]"));
  nn::GroupNorm eval_mode(4, 4);
  eval_mode.eval();
  REQUIRE_THROWS_WITH(eval_mode(Tensor::zeros({1, 4, 1})), Catch::Contains("got input size [1, 4, 1]"));
  REQUIRE_THROWS_WITH(group_norm(Tensor::zeros({1, 4}), 4, Tensor(), Tensor()),
                      Catch::Contains("Expected more than 1 value per channel when training"));
  CHECK(nn::GroupNorm(2, 4)(Tensor::from_vector({1, 2, 3, 5}, {1, 4})).shape() == Shape{1, 4});
  CHECK(nn::GroupNorm(4, 4)(Tensor::zeros({2, 4})).shape() == Shape{2, 4});
  CHECK(nn::GroupNorm(4, 4)(Tensor::zeros({0, 4})).shape() == Shape{0, 4});
}

TEST_CASE("composite group_norm refuses what the fused op refuses, with the same message", "[norm][group_norm]") {
  REQUIRE_THROWS_WITH(composite::group_norm(Tensor::zeros({1, 4}), 4, Tensor(), Tensor()),
                      "Expected more than 1 value per channel when training, got input size [1, 4]");
  REQUIRE_THROWS_WITH(composite::group_norm(Tensor::zeros({1, 4, 1}), 4, Tensor::ones({4}), Tensor::zeros({4})),
                      "Expected more than 1 value per channel when training, got input size [1, 4, 1]");
  struct Case {
    Shape shape;
    int64_t groups;
    Tensor weight;
  };
  const std::vector<Case> refused{{{1, 4}, 4, Tensor()}, {{1, 2, 1, 1}, 2, Tensor()}, {{2, 6, 3}, 4, Tensor()},
                                  {{6}, 2, Tensor()},    {{2, 6}, 0, Tensor()},       {{2, 6}, 2, Tensor::ones({4})}};
  auto message_of = [](const std::function<Tensor()>& call) -> std::string {
    try {
      (void)call();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  for (const Case& c : refused) {
    const Tensor x = Tensor::zeros(c.shape);
    const std::string fused = message_of([&] { return group_norm(x, c.groups, c.weight, Tensor()); });
    const std::string comp = message_of([&] { return composite::group_norm(x, c.groups, c.weight, Tensor()); });
    INFO(to_string(c.shape) << " in " << c.groups << " groups");
    CHECK(!fused.empty());
    CHECK(comp == fused);
  }
  // One value per group of each example, but more than one in all: both compute (zeros), as PyTorch.
  check_close(composite::group_norm(Tensor::from_vector({1, 2, 3, 5}, {2, 2}), 2, Tensor(), Tensor()), {0, 0, 0, 0}, 0,
              0);
}

TEST_CASE("GroupNorm errors name what was expected", "[norm][group_norm]") {
  REQUIRE_THROWS_WITH(nn::GroupNorm(4, 6), Catch::Contains("num_channels must be divisible by num_groups") &&
                                               Catch::Contains("num_channels=6") && Catch::Contains("num_groups=4"));
  REQUIRE_THROWS_WITH(group_norm(Tensor::zeros({2, 6, 3}), 4, Tensor(), Tensor()),
                      Catch::Contains("Expected number of channels in input to be divisible by num_groups, but got "
                                      "input of shape [2, 6, 3] and num_groups=4"));
  nn::GroupNorm gn(2, 6);
  REQUIRE_THROWS_WITH(gn(Tensor::zeros({2, 4, 3})),
                      Catch::Contains("expected input of shape (N, 6, *), got [2, 4, 3]"));
  REQUIRE_THROWS_WITH(gn(Tensor::zeros({6})), Catch::Contains("expected input of shape (N, 6, *), got [6]"));
  REQUIRE_THROWS_WITH(group_norm(Tensor::zeros({6}), 2, Tensor(), Tensor()),
                      Catch::Contains("at least 2 dims, got [6]"));
  REQUIRE_THROWS_WITH(group_norm(Tensor::zeros({2, 6}), 2, Tensor::ones({4}), Tensor()),
                      Catch::Contains("expected weight of shape [6]") && Catch::Contains("got [4]"));
}

}  // namespace test_norm_group_norm
