// Tanh and ReLU modules: values, gradients, repr.
#include <catch2/catch.hpp>

#include "minidl/minidl.hpp"
#include "support/check.hpp"

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

TEST_CASE("Tanh and ReLU modules apply their function elementwise", "[nn]") {
  Tensor x = Tensor::from_vector({-2.0f, -0.5f, 0.0f, 0.5f, 2.0f, 3.0f}, {2, 3});
  nn::Tanh tanh_module;
  nn::ReLU relu_module;
  // torch.tanh(torch.tensor([-2., -0.5, 0., 0.5, 2., 3.]))
  check_close(tanh_module(x), {-0.9640276f, -0.4621172f, 0.0f, 0.4621172f, 0.9640276f, 0.9950548f});
  check_close(relu_module(x), {0.0f, 0.0f, 0.0f, 0.5f, 2.0f, 3.0f});
  CHECK(tanh_module(x).shape() == Shape{2, 3});
  CHECK(tanh_module.repr() == "Tanh()");
  CHECK(relu_module.repr() == "ReLU()");
  CHECK(tanh_module.parameters().empty());
  CHECK(relu_module.state_dict().empty());
}

TEST_CASE("Tanh and ReLU modules pass gradients back", "[nn]") {
  auto x = [] { return Tensor::from_vector({-1.3f, -0.4f, 0.2f, 0.7f, 1.9f, -2.5f}, {3, 2}); };
  check_gradients([](const std::vector<Tensor>& in) { return nn::Tanh()(in[0]); }, {x()});
  check_gradients([](const std::vector<Tensor>& in) { return nn::ReLU()(in[0]); }, {x()});
}
