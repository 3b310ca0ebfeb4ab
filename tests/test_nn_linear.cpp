// Linear: forward by hand, gradients by finite differences, PyTorch's init bound and draw
// order, shapes and errors.
#include <catch2/catch.hpp>
#include <cmath>

#include "minidl/minidl.hpp"
#include "support/check.hpp"
#include "support/fixture.hpp"

namespace test_nn_linear {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

TEST_CASE("Linear computes x W^T + b", "[nn]") {
  nn::Linear layer(2, 3);
  layer.weight.detach().copy_(Tensor::from_vector({1, 0, 0, 1, 1, 1}, {3, 2}));
  layer.bias.detach().copy_(Tensor::from_vector({0.5f, -0.5f, 0.0f}));
  Tensor x = Tensor::from_vector({1, 2, 3, 4}, {2, 2});
  // By hand: [1, 2] -> [1 + 0.5, 2 - 0.5, 3]; [3, 4] -> [3.5, 3.5, 7].
  check_close(layer(x), {1.5f, 1.5f, 3.0f, 3.5f, 3.5f, 7.0f});
}

TEST_CASE("Linear without bias has no bias parameter", "[nn]") {
  nn::Linear layer(nn::LinearOptions(2, 2).bias(false));
  CHECK_FALSE(layer.bias.defined());
  layer.weight.detach().copy_(Tensor::from_vector({2, 0, 1, -1}, {2, 2}));
  check_close(layer(Tensor::from_vector({3, 5}, {1, 2})), {6.0f, -2.0f});
  REQUIRE(layer.named_parameters().size() == 1);
  CHECK(layer.named_parameters()[0].first == "weight");
  CHECK(layer.state_dict().size() == 1);
  CHECK(layer.repr() == "Linear(in_features=2, out_features=2, bias=False)");
}

TEST_CASE("Linear takes any leading dims, like nn.Linear", "[nn]") {
  Generator gen(3);
  nn::Linear layer(4, 2, gen);
  Tensor x = Tensor::randn({2, 3, 4}, gen);
  Tensor y = layer(x);
  REQUIRE(y.shape() == Shape{2, 3, 2});
  check_close(y.reshape({6, 2}), layer(x.reshape({6, 4})));
  Tensor v = layer(Tensor::from_vector({1, 2, 3, 4}));  // (in) -> (out)
  REQUIRE(v.shape() == Shape{2});
  check_close(v, layer(Tensor::from_vector({1, 2, 3, 4}, {1, 4})).reshape({2}));
}

TEST_CASE("Linear gradients for input, weight and bias match finite differences", "[nn]") {
  Generator gen(7);
  nn::Linear layer(5, 3, gen);
  Tensor x = Tensor::randn({4, 5}, gen);
  check_gradients([](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); },
                  {x, layer.weight.detach().clone(), layer.bias.detach().clone()});
  // And through the module: backward reaches the registered parameters.
  Tensor xs = x.detach().clone().requires_grad_();
  sum(layer(xs)).backward();
  // d sum(y) / dW[o][i] = sum_n x[n][i]; d/db = N; d/dx[n][i] = sum_o W[o][i].
  check_close(layer.bias.grad(), {4.0f, 4.0f, 4.0f});
  Tensor column_sums = sum(x, {0}, true);  // (1, 5)
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t i = 0; i < 5; ++i)
      CHECK(layer.weight.grad().at({o, i}) == Approx(column_sums.at({0, i})).margin(1e-5));
  Tensor weight_sums = sum(layer.weight.detach(), {0});  // (5)
  for (int64_t n = 0; n < 4; ++n)
    for (int64_t i = 0; i < 5; ++i) CHECK(xs.grad().at({n, i}) == Approx(weight_sums.at({i})).margin(1e-5));
}

TEST_CASE("Linear init draws weight then bias uniformly within 1/sqrt(in)", "[nn]") {
  Generator a(42), b(42), c(43);
  nn::Linear first(64, 10, a);
  nn::Linear second(64, 10, b);
  nn::Linear other(64, 10, c);
  check_close(first.weight, second.weight, 0.0, 0.0);  // same seed, same bits
  check_close(first.bias, second.bias, 0.0, 0.0);
  CHECK(first.weight.to_vector() != other.weight.to_vector());

  const float bound = 1.0f / std::sqrt(64.0f);
  float lo = 1.0f, hi = -1.0f;
  for (float v : first.weight.to_vector()) lo = std::min(lo, v), hi = std::max(hi, v);
  for (float v : first.bias.to_vector()) lo = std::min(lo, v), hi = std::max(hi, v);
  CHECK(lo >= -bound);
  CHECK(hi < bound);
  // 650 uniform draws cover most of the interval: not a constant or a narrower range.
  CHECK(lo < -0.9f * bound);
  CHECK(hi > 0.9f * bound);

  // The order: the weight's 640 draws row-major, then the bias's 10 from the same stream.
  Generator replay(42);
  check_close(first.weight, Tensor::rand({10, 64}, replay, -bound, bound), 0.0, 0.0);
  check_close(first.bias, Tensor::rand({10}, replay, -bound, bound), 0.0, 0.0);

  // reset_parameters redraws in place, into the same tensors.
  const float* storage = first.weight.data();
  Generator again(42);
  first.weight.detach().fill_(0.0f);
  first.reset_parameters(again);
  CHECK(first.weight.data() == storage);
  check_close(first.weight, second.weight, 0.0, 0.0);
}

TEST_CASE("Linear parameters require grad and print like PyTorch", "[nn]") {
  nn::Linear layer(64, 10);
  CHECK(layer.weight.requires_grad());
  CHECK(layer.bias.requires_grad());
  CHECK(layer.weight.shape() == Shape{10, 64});
  CHECK(layer.bias.shape() == Shape{10});
  CHECK(layer.repr() == "Linear(in_features=64, out_features=10, bias=True)");
  CHECK(layer.in_features() == 64);
  CHECK(layer.out_features() == 10);
}

TEST_CASE("Linear errors name the shapes", "[nn]") {
  nn::Linear layer(3, 2);
  REQUIRE_THROWS_WITH(layer(Tensor::zeros({4, 5})), Catch::Contains("expected input of shape [*, 3]") &&
                                                        Catch::Contains("[2, 3]") && Catch::Contains("got [4, 5]"));
  REQUIRE_THROWS_WITH(layer(Tensor::scalar(1.0f)), Catch::Contains("got []"));
  REQUIRE_THROWS_WITH(nn::Linear(0, 2), Catch::Contains("in_features=0"));
  REQUIRE_THROWS_WITH(nn::Linear(3, -1), Catch::Contains("out_features=-1"));
}

TEST_CASE("Linear matches PyTorch's fixtures: output and every gradient", "[nn]") {
  // scripts/fixtures/layers.py, linear_cases: nn.Linear(in, out, bias) at PyTorch's own init,
  // out = m(x), gradients of sum(out * grad_output).
  struct Spec {
    const char* name;
    int64_t in, out;
    bool bias;
  };
  for (const Spec& spec :
       {Spec{"linear_bias", 5, 3, true}, Spec{"linear_nobias", 5, 3, false}, Spec{"linear_batch1", 7, 2, true},
        Spec{"linear_3d", 5, 3, true}, Spec{"linear_1d", 5, 3, false}}) {
    INFO(spec.name);
    minidl::testing::Fixture f(spec.name);
    nn::Linear layer(nn::LinearOptions(spec.in, spec.out).bias(spec.bias));
    {
      NoGradGuard no_grad;  // writes into parameters, as torch.no_grad() around them
      layer.weight.copy_(f["weight"]);
      if (spec.bias) layer.bias.copy_(f["bias"]);
    }
    Tensor x = f["input"].detach().clone().requires_grad_();
    Tensor y = layer(x);
    check_close(y, f["output"], 1e-6, 1e-5);
    sum(y * f["grad_output"]).backward();
    check_close(x.grad(), f["input.grad"], 1e-6, 1e-5);
    check_close(layer.weight.grad(), f["weight.grad"], 1e-6, 1e-5);
    if (spec.bias) check_close(layer.bias.grad(), f["bias.grad"], 1e-6, 1e-5);
  }
}

TEST_CASE("LinearOptions: bias on by default, off by name", "[nn][linear]") {
  Generator gen(0);
  nn::Linear with(nn::LinearOptions(3, 2), gen);
  nn::Linear without(nn::LinearOptions(3, 2).bias(false), gen);
  CHECK(nn::LinearOptions(3, 2).bias());
  CHECK(with.bias.defined());
  CHECK_FALSE(without.bias.defined());
  CHECK(without.repr() == "Linear(in_features=3, out_features=2, bias=False)");
  // Same draws as the two-integer constructor from the same generator.
  Generator a(5), b(5);
  check_close(nn::Linear(nn::LinearOptions(3, 2), a).weight, nn::Linear(3, 2, b).weight, 0.0, 0.0);
}

}  // namespace test_nn_linear
