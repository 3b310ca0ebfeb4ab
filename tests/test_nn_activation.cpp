// Tanh and ReLU modules: values, gradients, repr.
#include <catch2/catch.hpp>

#include "minidl/minidl.hpp"
#include "support/check.hpp"
#include "support/fixture.hpp"

namespace test_nn_activation {

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

TEST_CASE("Tanh and ReLU match PyTorch's fixtures", "[nn]") {
  // scripts/fixtures/layers.py, activation_cases: out = nn.Tanh()(x) or torch.relu(x) (exact
  // zeros in x: the gradient there is 0), gradients of sum(out * grad_output).
  struct Spec {
    const char* name;
    std::shared_ptr<nn::Module> module;
  };
  for (const Spec& spec : {Spec{"tanh_2d", std::make_shared<nn::Tanh>()}, Spec{"tanh_3d", std::make_shared<nn::Tanh>()},
                           Spec{"relu", std::make_shared<nn::ReLU>()}}) {
    INFO(spec.name);
    minidl::testing::Fixture f(spec.name);
    Tensor x = f["input"].detach().clone().requires_grad_();
    Tensor y = spec.module->forward(x);
    check_close(y, f["output"], 1e-6, 1e-5);
    sum(y * f["grad_output"]).backward();
    check_close(x.grad(), f["input.grad"], 1e-6, 1e-5);
  }
}

}  // namespace test_nn_activation
