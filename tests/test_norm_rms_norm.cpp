// RMSNorm and the fused rms_norm op against the worked examples of docs/normalization.md, a plain-loop
// reference, finite differences and the composite version.
#include <limits>

#include "support/check.hpp"
#include "support/norm_reference.hpp"

namespace test_norm_rms_norm {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;
using minidl::testing::random_normal;

TEST_CASE("RMSNorm of [3, 4] is 0.849, 1.131 and of [1, 7] is 0.2, 1.4", "[norm][rms_norm]") {
  nn::RMSNorm rms(2);
  Tensor y = rms(Tensor::from_vector({3, 4, 1, 7}, {2, 2}));
  check_close(y, {0.849f, 1.131f, 0.2f, 1.4f}, 1e-3, 0);
  const float r = std::sqrt(12.5f);  // rms of [3, 4]
  check_close(y, {3 / r, 4 / r, 0.2f, 1.4f}, 1e-6, 1e-6);
}

TEST_CASE("RMSNorm of [2, 4, 4, 10] is 0.343, 0.686, 0.686, 1.715", "[norm][rms_norm]") {
  nn::RMSNorm rms(4);
  Tensor y = rms(Tensor::from_vector({2, 4, 4, 10}));
  check_close(y, {0.343f, 0.686f, 0.686f, 1.715f}, 5e-4, 0);
  const float r = std::sqrt(34.0f);  // (4 + 16 + 16 + 100) / 4
  check_close(y, {2 / r, 4 / r, 4 / r, 10 / r}, 1e-6, 1e-6);
}

TEST_CASE("RMSNorm of the lesson's 2x3 example", "[norm][rms_norm]") {
  nn::RMSNorm rms(nn::RMSNormOptions{.normalized_shape = {3}, .eps = 1e-5});
  check_close(rms(Tensor::from_vector({1, 5, 3, 2, 2, 8}, {2, 3})), {0.29f, 1.46f, 0.88f, 0.41f, 0.41f, 1.63f}, 5e-3,
              0);
}

TEST_CASE("RMSNorm's default eps is float32's machine epsilon", "[norm][rms_norm]") {
  // With x = [e, -e] for a tiny e, mean(x^2) is far below eps, so y = x / sqrt(eps) shows eps.
  const float e = 1e-6f;
  Tensor y = nn::RMSNorm(2)(Tensor::from_vector({e, -e}));
  const double eps = std::numeric_limits<float>::epsilon();
  check_close(y, {float(e / std::sqrt(e * double(e) + eps)), float(-e / std::sqrt(e * double(e) + eps))}, 1e-7, 1e-5);
  CHECK(eps == Approx(1.1920929e-07));
}

TEST_CASE("RMSNorm parameters and repr match PyTorch's", "[norm][rms_norm]") {
  nn::RMSNorm rms(64);
  CHECK(minidl::testing::parameter_count(rms) == 64);
  REQUIRE(rms.state_dict().size() == 1);
  CHECK(rms.state_dict()[0].name == "weight");
  check_close(rms.weight, std::vector<float>(64, 1.0f), 0, 0);
  CHECK(rms.repr() == "RMSNorm((64,), eps=None, elementwise_affine=True)");
  nn::RMSNorm plain(nn::RMSNormOptions{.normalized_shape = {2, 3}, .eps = 1e-6, .elementwise_affine = false});
  CHECK(plain.repr() == "RMSNorm((2, 3), eps=1e-06, elementwise_affine=False)");
  CHECK(plain.parameters().empty());
}

TEST_CASE("RMSNorm over one and several trailing dims matches a plain loop", "[norm][rms_norm]") {
  for (auto [input, normalized] : {std::pair{Shape{7, 5}, Shape{5}}, std::pair{Shape{2, 3, 4}, Shape{3, 4}}}) {
    for (bool affine : {true, false}) {
      nn::RMSNorm rms(nn::RMSNormOptions{.normalized_shape = normalized, .eps = 1e-4, .elementwise_affine = affine});
      if (affine) rms.weight.detach().copy_(random_normal(normalized, 5, 1.0f, 0.5f));
      Tensor x = random_normal(input, 6, 1.0f, 2.0f);
      check_close(rms(x),
                  minidl::testing::row_normalize_reference(x, numel(normalized), false, 1e-4, rms.weight, Tensor()),
                  2e-5, 1e-5);
    }
  }
}

TEST_CASE("RMSNorm input and weight gradients match finite differences", "[norm][rms_norm]") {
  for (auto [input, normalized] : {std::pair{Shape{4, 6}, Shape{6}}, std::pair{Shape{2, 3, 5}, Shape{5}},
                                   std::pair{Shape{2, 3, 4}, Shape{3, 4}}}) {
    for (bool training : {true, false}) {
      INFO("input " << to_string(input) << " training " << training);
      nn::RMSNorm rms(nn::RMSNormOptions{.normalized_shape = normalized});
      rms.train(training);
      auto f = [&](const std::vector<Tensor>& in) {
        rms.weight = in[1];
        return rms(in[0]);
      };
      check_gradients(f, {random_normal(input, 71), random_normal(normalized, 72, 1.0f, 0.3f)});
    }
  }
  check_gradients([](const std::vector<Tensor>& in) { return rms_norm(in[0], {5}, Tensor()); },
                  {random_normal({3, 5}, 73)});
}

TEST_CASE("RMSNorm fused op and composite agree in forward and backward", "[norm][rms_norm]") {
  for (auto [input, normalized] : {std::pair{Shape{64, 64}, Shape{64}}, std::pair{Shape{2, 3, 4}, Shape{3, 4}}}) {
    auto fused = [&](const std::vector<Tensor>& in) { return rms_norm(in[0], normalized, in[1]); };
    auto comp = [&](const std::vector<Tensor>& in) { return composite::rms_norm(in[0], normalized, in[1]); };
    std::vector<Tensor> inputs{random_normal(input, 81, 0.5f, 2.0f), random_normal(normalized, 82)};
    auto a = minidl::testing::gradients(fused, inputs), b = minidl::testing::gradients(comp, inputs);
    for (size_t i = 0; i < a.size(); ++i) {
      INFO("input " << to_string(input) << " result " << i << " (0 = output, then dx, dweight)");
      check_close(a[i], b[i], 1e-5, 1e-5);
    }
  }
}

TEST_CASE("RMSNorm errors name what was expected", "[norm][rms_norm]") {
  nn::RMSNorm rms(64);
  REQUIRE_THROWS_WITH(rms(Tensor::zeros({8, 32})),
                      Catch::Contains("Given normalized_shape=[64], expected input with shape [*, 64], but got input "
                                      "of size[8, 32]"));
  REQUIRE_THROWS_WITH(rms_norm(Tensor::zeros({2, 4}), {4}, Tensor::ones({2, 2})),
                      Catch::Contains("expected weight of shape [4]") && Catch::Contains("got [2, 2]"));
}

}  // namespace test_norm_rms_norm
