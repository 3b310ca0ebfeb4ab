// DyT (Zhu et al. 2025): its worked values, the reference module's names, init and text,
// finite differences over x, alpha, weight and bias, and its errors. The PyTorch fixtures are
// in test_fixtures_norm.cpp.
#include <cmath>

#include "support/check.hpp"
#include "support/norm_reference.hpp"

namespace test_norm_dyt {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;
using minidl::testing::random_normal;

TEST_CASE("DyT of [0, 2, -4] with alpha 0.5 is tanh(0), tanh(1), tanh(-2)", "[norm][dyt]") {
  nn::DyT dyt(3);
  check_close(dyt(Tensor::from_vector({0, 2, -4}, {1, 3})), {0.0f, std::tanh(1.0f), std::tanh(-2.0f)}, 1e-6, 1e-6);
  {
    NoGradGuard no_grad;
    dyt.alpha.fill_(2.0f);
    dyt.weight.copy_(Tensor::from_vector({1, 3, -1}));
    dyt.bias.copy_(Tensor::from_vector({0.5f, 0, 1}));
  }
  check_close(dyt(Tensor::from_vector({0, 0.5f, 1}, {1, 3})), {0.5f, 3 * std::tanh(1.0f), 1 - std::tanh(2.0f)}, 1e-6,
              1e-6);
}

TEST_CASE("DyT on (N, C, H, W) with channels_last false scales per channel", "[norm][dyt]") {
  nn::DyT dyt(nn::DyTOptions{.normalized_shape = 2, .alpha_init_value = 1.0, .channels_last = false});
  {
    NoGradGuard no_grad;
    dyt.weight.copy_(Tensor::from_vector({2, -1}));
  }
  Tensor y = dyt(Tensor::from_vector({1, 1, 1, 1}, {1, 2, 2, 1}));  // channel 0, then channel 1
  const float t = std::tanh(1.0f);
  check_close(y, {2 * t, 2 * t, -t, -t}, 1e-6, 1e-6);
}

TEST_CASE("DyT has the reference module's parameters, init and text", "[norm][dyt]") {
  nn::DyT dyt(64);
  auto state = dyt.state_dict();
  REQUIRE(state.size() == 3);
  CHECK(state[0].name == "alpha");
  CHECK(state[1].name == "weight");
  CHECK(state[2].name == "bias");
  CHECK(dyt.alpha.shape() == Shape{1});
  check_close(dyt.alpha, {0.5f}, 0, 0);
  check_close(dyt.weight, std::vector<float>(64, 1.0f), 0, 0);
  check_close(dyt.bias, std::vector<float>(64, 0.0f), 0, 0);
  CHECK(minidl::testing::parameter_count(dyt) == 129);
  CHECK(dyt.repr() == "DyT(normalized_shape=64, alpha_init_value=0.5, channels_last=True)");
  CHECK(nn::DyT(8, 2.0).repr() == "DyT(normalized_shape=8, alpha_init_value=2.0, channels_last=True)");
}

TEST_CASE("DyT input, alpha, weight and bias gradients match finite differences", "[norm][dyt]") {
  for (bool channels_last : {true, false}) {
    INFO("channels_last " << channels_last);
    nn::DyT dyt(nn::DyTOptions{.normalized_shape = 3, .channels_last = channels_last});
    auto f = [&](const std::vector<Tensor>& in) {
      dyt.alpha = in[1];
      dyt.weight = in[2];
      dyt.bias = in[3];
      return dyt(in[0]);
    };
    const Shape input = channels_last ? Shape{4, 3} : Shape{2, 3, 2};
    check_gradients(f, {random_normal(input, 91, 0.0f, 1.5f), Tensor::from_vector({0.7f}), random_normal({3}, 92),
                        random_normal({3}, 93)});
  }
}

TEST_CASE("DyT errors name what was expected", "[norm][dyt]") {
  REQUIRE_THROWS_WITH(nn::DyT(0), Catch::Contains("normalized_shape must be positive, got 0"));
  nn::DyT dyt(4);
  REQUIRE_THROWS_WITH(
      dyt(Tensor::zeros({2, 3})),
      Catch::Contains("DyT(4): expected input with 4 features on the last dim (N, *, C), got shape [2, 3]"));
  nn::DyT first(nn::DyTOptions{.normalized_shape = 4, .channels_last = false});
  REQUIRE_THROWS_WITH(first(Tensor::zeros({4})),
                      Catch::Contains("expected input with 4 features on dim 1 (N, C, *), got shape [4]"));
}

}  // namespace test_norm_dyt
