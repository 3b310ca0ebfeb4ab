// The "Writing a new layer" example (apps/custom_layer/scale_norm.hpp): the library's
// gradcheck, the composite, and the module's errors.
#include "../apps/custom_layer/scale_norm.hpp"
#include "support/check.hpp"
#include "support/norm_reference.hpp"

namespace test_custom_layer {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::random_normal;

TEST_CASE("ScaleNorm's fused backward passes the library's gradcheck", "[norm][custom_layer]") {
  for (Shape shape : {Shape{4, 6}, Shape{2, 3, 5}, Shape{7}}) {
    INFO("shape " << to_string(shape));
    minidl::testing::check_gradients([](const std::vector<Tensor>& in) { return custom::scale_norm(in[0], in[1]); },
                                     {random_normal(shape, 2), Tensor::from_vector({0.8f})});
  }
}

TEST_CASE("ScaleNorm matches its composite and its formula", "[norm][custom_layer]") {
  Tensor x = random_normal({5, 8}, 3, 0.5f, 2.0f), g = Tensor::from_vector({2.5f});
  auto a = minidl::testing::gradients([](const std::vector<Tensor>& in) { return custom::scale_norm(in[0], in[1]); },
                                      {x, g});
  auto b = minidl::testing::gradients(
      [](const std::vector<Tensor>& in) { return custom::scale_norm_composite(in[0], in[1]); }, {x, g});
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("result " << i << " (0 = output, then dx, dg)");
    check_close(a[i], b[i], 1e-5, 1e-5);
  }
  // [3, 4] has norm 5: y = g * [0.6, 0.8].
  check_close(custom::scale_norm(Tensor::from_vector({3, 4}), g, 0.0), {1.5f, 2.0f}, 1e-6, 1e-6);
}

TEST_CASE("ScaleNorm as a module: parameter, repr, errors", "[norm][custom_layer]") {
  custom::ScaleNorm layer(16);
  REQUIRE(layer.named_parameters().size() == 1);
  CHECK(layer.named_parameters()[0].first == "g");
  CHECK(layer.g.item() == Approx(4.0f));
  CHECK(layer.repr() == "ScaleNorm(16, eps=1e-05)");
  REQUIRE_THROWS_WITH(layer(Tensor::zeros({2, 8})), Catch::Contains("expected input of shape [*, 16], got [2, 8]"));
  REQUIRE_THROWS_WITH(custom::scale_norm(Tensor::zeros({2, 8}), Tensor::ones({2})),
                      Catch::Contains("g of shape [1], got [2, 8] and [2]"));
}

}  // namespace test_custom_layer
