// LayerNorm and the fused layer_norm op against the worked examples of docs/normalization.md, a
// plain-loop reference, finite differences and the composite version.
#include "support/check.hpp"
#include "support/norm_reference.hpp"

namespace test_norm_layer_norm {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;
using minidl::testing::random_normal;

TEST_CASE("LayerNorm of [2, 4, 4, 10] with eps 0 is -1, -1/3, -1/3, 5/3", "[norm][layer_norm]") {
  nn::LayerNorm ln(nn::LayerNormOptions{.normalized_shape = {4}, .eps = 0.0});
  check_close(ln(Tensor::from_vector({2, 4, 4, 10}, {1, 4})), {-1.0f, -1.0f / 3, -1.0f / 3, 5.0f / 3}, 1e-6, 1e-6);
}

TEST_CASE("Pre-norm x + f(norm(x)) with f(v) = 3v on [2, 4, 4, 10] is -1, 3, 3, 15", "[norm][layer_norm]") {
  nn::LayerNorm ln(nn::LayerNormOptions{.normalized_shape = {4}, .eps = 0.0});
  Tensor x = Tensor::from_vector({2, 4, 4, 10});
  check_close(x + ln(x) * 3.0f, {-1, 3, 3, 15}, 1e-5, 1e-6);
}

TEST_CASE("LayerNorm of the lesson's 2x3 example", "[norm][layer_norm]") {
  nn::LayerNorm ln(3);
  Tensor y = ln(Tensor::from_vector({1, 5, 3, 2, 2, 8}, {2, 3}));
  check_close(y, {-1.22f, 1.22f, 0.0f, -0.71f, -0.71f, 1.41f}, 5e-3, 0);
  check_close(y, {-std::sqrt(1.5f), std::sqrt(1.5f), 0.0f, -1 / std::sqrt(2.0f), -1 / std::sqrt(2.0f), std::sqrt(2.0f)},
              2e-5, 1e-5);
}

TEST_CASE("LayerNorm parameters, names and repr match PyTorch's", "[norm][layer_norm]") {
  nn::LayerNorm ln(64);
  CHECK(minidl::testing::parameter_count(ln) == 128);
  CHECK(ln.named_buffers().empty());
  nn::StateDict state = ln.state_dict();
  REQUIRE(state.size() == 2);
  CHECK(state[0].name == "weight");
  CHECK(state[1].name == "bias");
  check_close(ln.weight, std::vector<float>(64, 1.0f), 0, 0);
  check_close(ln.bias, std::vector<float>(64, 0.0f), 0, 0);
  CHECK(ln.repr() == "LayerNorm((64,), eps=1e-05, elementwise_affine=True)");
  CHECK(nn::LayerNorm(nn::LayerNormOptions{.normalized_shape = {2, 3}, .eps = 1e-6, .elementwise_affine = false})
            .repr() == "LayerNorm((2, 3), eps=1e-06, elementwise_affine=False)");

  nn::LayerNorm no_bias(nn::LayerNormOptions{.normalized_shape = {64}, .bias = false});
  CHECK(minidl::testing::parameter_count(no_bias) == 64);
  CHECK_FALSE(no_bias.bias.defined());
  REQUIRE(no_bias.state_dict().size() == 1);
  nn::LayerNorm no_affine(nn::LayerNormOptions{.normalized_shape = {64}, .elementwise_affine = false});
  CHECK(no_affine.parameters().empty());
  CHECK(no_affine.state_dict().empty());
}

TEST_CASE("LayerNorm over one and several trailing dims matches a plain loop", "[norm][layer_norm]") {
  struct Case {
    Shape input, normalized;
  };
  for (const Case& c : {Case{{7, 5}, {5}}, Case{{3, 4, 6}, {6}}, Case{{2, 3, 4}, {3, 4}}, Case{{5}, {5}}}) {
    INFO("input " << to_string(c.input) << " normalized " << to_string(c.normalized));
    for (int variant = 0; variant < 3; ++variant) {  // affine with bias, without bias, no affine
      nn::LayerNorm ln(nn::LayerNormOptions{
          .normalized_shape = c.normalized, .elementwise_affine = variant < 2, .bias = variant == 0});
      Generator gen(5);
      if (ln.weight.defined()) ln.weight.detach().copy_(Tensor::randn(c.normalized, gen, 1.0f, 0.5f));
      if (ln.bias.defined()) ln.bias.detach().copy_(Tensor::randn(c.normalized, gen));
      Tensor x = random_normal(c.input, 6, 3.0f, 2.0f);
      Tensor expected =
          minidl::testing::row_normalize_reference(x, numel(c.normalized), true, 1e-5, ln.weight, ln.bias);
      check_close(ln(x), expected, 2e-5, 1e-5);
      ln.eval();  // the same in eval
      check_close(ln(x), expected, 2e-5, 1e-5);
    }
  }
}

TEST_CASE("LayerNorm input, weight and bias gradients match finite differences", "[norm][layer_norm]") {
  struct Case {
    Shape input, normalized;
  };
  for (const Case& c : {Case{{4, 6}, {6}}, Case{{2, 3, 5}, {5}}, Case{{2, 3, 4}, {3, 4}}}) {
    for (bool training : {true, false}) {
      INFO("input " << to_string(c.input) << " training " << training);
      nn::LayerNorm ln(nn::LayerNormOptions{.normalized_shape = c.normalized});
      ln.train(training);
      auto f = [&](const std::vector<Tensor>& in) {
        ln.weight = in[1];  // the module's forward, with the checked tensors as its parameters
        ln.bias = in[2];
        return ln(in[0]);
      };
      check_gradients(f, {random_normal(c.input, 71), random_normal(c.normalized, 72, 1.0f, 0.3f),
                          random_normal(c.normalized, 73)});
    }
  }
  // Without weight and bias only the input has a gradient.
  auto plain = [](const std::vector<Tensor>& in) { return layer_norm(in[0], {5}, Tensor(), Tensor()); };
  check_gradients(plain, {random_normal({3, 5}, 74)});
}

TEST_CASE("LayerNorm fused op and composite agree in forward and backward", "[norm][layer_norm]") {
  struct Case {
    Shape input, normalized;
  };
  for (const Case& c : {Case{{64, 64}, {64}}, Case{{3, 4, 7}, {7}}, Case{{2, 3, 4}, {3, 4}}}) {
    INFO("input " << to_string(c.input));
    auto fused = [&](const std::vector<Tensor>& in) { return layer_norm(in[0], c.normalized, in[1], in[2]); };
    auto comp = [&](const std::vector<Tensor>& in) { return composite::layer_norm(in[0], c.normalized, in[1], in[2]); };
    std::vector<Tensor> inputs{random_normal(c.input, 81, 0.5f, 2.0f), random_normal(c.normalized, 82),
                               random_normal(c.normalized, 83)};
    auto a = minidl::testing::gradients(fused, inputs), b = minidl::testing::gradients(comp, inputs);
    for (size_t i = 0; i < a.size(); ++i) {
      INFO("result " << i << " (0 = output, then dx, dweight, dbias)");
      check_close(a[i], b[i], 1e-5, 1e-5);
    }
  }
}

TEST_CASE("LayerNorm normalizes inputs with mean 1e4 and std 1e-1", "[norm][layer_norm]") {
  nn::LayerNorm ln(nn::LayerNormOptions{.normalized_shape = {256}, .elementwise_affine = false});
  Tensor x = random_normal({4, 256}, 91, 1e4f, 0.1f);
  Tensor y = ln(x);
  check_close(y, minidl::testing::row_normalize_reference(x, 256, true, 1e-5, Tensor(), Tensor()), 1e-5, 1e-5);
  check_close(mean(y, {1}), std::vector<float>(4, 0.0f), 1e-5, 0);
  check_close(var(y, {1}, 0), std::vector<float>(4, 1.0f), 2e-3, 0);  // var / (var + eps) with var 1e-2
  // The backward too: the saved float mean is off by up to 5e-4 here, which it corrects.
  Tensor x_grad = x.clone().requires_grad_(), dy = random_normal({4, 256}, 92);
  sum(layer_norm(x_grad, {256}, Tensor(), Tensor()) * dy).backward();
  check_close(x_grad.grad(),
              minidl::testing::normalize_input_grad_reference(x, dy, 4, 256, 1e-5,
                                                              [](int64_t r, int64_t j) { return r * 256 + j; }),
              1e-4, 1e-5);  // |dx| up to ~40
}

TEST_CASE("composite LayerNorm and GroupNorm centre exactly: mean 1e4, std 1e-2", "[norm][layer_norm]") {
  // Half an ulp of 1e4 (4.9e-4) is 5% of the spread: x - float(mean) would show it.
  Tensor x = random_normal({4, 64}, 93, 1e4f, 1e-2f);
  check_close(composite::layer_norm(x, {64}, Tensor(), Tensor()),
              minidl::testing::row_normalize_reference(x, 64, true, 1e-5, Tensor(), Tensor()), 1e-5, 1e-5);
  check_close(composite::group_norm(x.reshape({2, 2, 64}), 2, Tensor(), Tensor()).reshape({4, 64}),
              minidl::testing::row_normalize_reference(x, 64, true, 1e-5, Tensor(), Tensor()), 1e-5, 1e-5);
}

TEST_CASE("LayerNorm errors name what was expected", "[norm][layer_norm]") {
  nn::LayerNorm ln(64);
  REQUIRE_THROWS_WITH(ln(Tensor::zeros({8, 32})),
                      Catch::Contains("Given normalized_shape=[64], expected input with shape [*, 64], but got input "
                                      "of size[8, 32]"));
  nn::LayerNorm ln2(nn::LayerNormOptions{.normalized_shape = {3, 4}});
  REQUIRE_THROWS_WITH(ln2(Tensor::zeros({4})), Catch::Contains("expected input with shape [*, 3, 4]"));
  REQUIRE_THROWS_WITH(ln2(Tensor::zeros({2, 4, 3})), Catch::Contains("got input of size[2, 4, 3]"));
  REQUIRE_THROWS_WITH(layer_norm(Tensor::zeros({2, 4}), {4}, Tensor::ones({5}), Tensor()),
                      Catch::Contains("expected weight of shape [4]") && Catch::Contains("got [5]"));
  REQUIRE_THROWS_WITH(layer_norm(Tensor::zeros({2, 4}), {}, Tensor(), Tensor()),
                      Catch::Contains("Expected normalized_shape to be at least 1-dimensional"));
}

}  // namespace test_norm_layer_norm
