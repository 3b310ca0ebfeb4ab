// GELU (approximate "none" and "tanh") and SiLU: PyTorch fixtures, finite differences,
// reprs and the refused approximate.
#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/activation.hpp"
#include "minidl/minidl.hpp"
#include "support/check.hpp"
#include "support/fixture.hpp"

namespace test_nn_gelu_silu {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

TEST_CASE("GELU and SiLU match PyTorch's fixtures, values and input gradients", "[nn][activation]") {
  // scripts/fixtures/layers.py: inputs 3 * randn with 0, +-10, -5.5, 6, 1e-3 among them;
  // gradients of sum(out * grad_output). SLEEF's erf and exp are within 1 ulp, PyTorch's own
  // vectorized erf within a few: a few float32 ulps of the largest value apart at most.
  struct Spec {
    const char* name;
    std::shared_ptr<nn::Module> module;
  };
  for (const Spec& spec :
       {Spec{"gelu_none", std::make_shared<nn::GELU>()}, Spec{"gelu_none_3d", std::make_shared<nn::GELU>("none")},
        Spec{"silu", std::make_shared<nn::SiLU>()}, Spec{"silu_3d", std::make_shared<nn::SiLU>()}}) {
    INFO(spec.name);
    minidl::testing::Fixture f(spec.name);
    Tensor x = f["input"].detach().clone().requires_grad_();
    Tensor y = spec.module->forward(x);
    check_close(y, f["output"], 1e-6, 1e-5);
    sum(y * f["grad_output"]).backward();
    check_close(x.grad(), f["input.grad"], 1e-6, 1e-5);
  }
}

TEST_CASE("GELU's tanh approximation matches PyTorch's fixture within its tanh's difference", "[nn][activation]") {
  // GELU "tanh" is x/2 (1 + t), t = tanh(z), z = sqrt(2/pi) (x + 0.044715 x^3). minidl's t is
  // its tanh kernel's, within 1.15 ulp of the exact tanh; PyTorch's is SLEEF's, within 1: the
  // two t differ by at most 2.15 ulp, below 2.15 * 2^-24 for |t| < 1, and each rounding of z
  // (2 ulps, |dt/dz| <= 1) adds as much: dt = 6 * 2^-24 bounds them. The output then moves by
  // at most |x|/2 dt, the input gradient by |dout| (1/2 + |x| sqrt(2/pi) (1 + 3 0.044715 x^2)) dt
  // (its derivative in t), on top of the tolerance of the other activations.
  const double dt = 6.0 * std::ldexp(1.0, -24), beta = std::sqrt(2.0 / M_PI), kappa = 0.044715;
  minidl::testing::Fixture f("gelu_tanh");
  Tensor x = f["input"].detach().clone().requires_grad_();
  Tensor y = nn::GELU("tanh").forward(x);
  sum(y * f["grad_output"]).backward();
  const std::vector<float> xs = x.to_vector(), ys = y.to_vector(), grads = x.grad().to_vector();
  const std::vector<float> want_y = f["output"].to_vector(), want_grad = f["input.grad"].to_vector();
  const std::vector<float> dout = f["grad_output"].to_vector();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double v = xs[i], slope = 0.5 + std::abs(v) * beta * (1.0 + 3.0 * kappa * v * v);
    INFO("x " << v << " at " << i);
    CHECK(std::abs(ys[i] - want_y[i]) <= 1e-6 + 1e-5 * std::abs(want_y[i]) + 0.5 * std::abs(v) * dt);
    CHECK(std::abs(grads[i] - want_grad[i]) <= 1e-6 + 1e-5 * std::abs(want_grad[i]) + std::abs(dout[i]) * slope * dt);
  }
}

TEST_CASE("GELU and SiLU pass gradients back (finite differences)", "[nn][activation]") {
  auto x = [] { return Tensor::from_vector({-3.1f, -1.3f, -0.4f, 0.05f, 0.7f, 1.9f, 2.6f, -0.9f, 4.0f}, {3, 3}); };
  check_gradients([](const std::vector<Tensor>& in) { return gelu(in[0]); }, {x()});
  check_gradients([](const std::vector<Tensor>& in) { return gelu(in[0], "tanh"); }, {x()});
  check_gradients([](const std::vector<Tensor>& in) { return silu(in[0]); }, {x()});
  // More values than one vector and one parallel chunk hold: the tails take the same path.
  Generator gen(3);
  Tensor big = Tensor::randn({4099}, gen, 0.0f, 2.0f);
  check_gradients([](const std::vector<Tensor>& in) { return nn::GELU("tanh")(in[0]); }, {big});
}

TEST_CASE("GELU and SiLU's kernels give each value the same result wherever it sits", "[nn][activation]") {
  // A value's result does not depend on its position in the array (vector body or tail).
  Generator gen(5);
  Tensor x = Tensor::randn({8197}, gen, 0.0f, 3.0f);
  Tensor whole = gelu(x), whole_tanh = gelu(x, "tanh"), whole_silu = silu(x);
  for (int64_t start : {0, 1, 7, 4095, 8190}) {
    INFO("start " << start);
    float one = 0.0f, one_silu = 0.0f;
    float one_tanh = 0.0f;
    kernels::gelu_forward(&one, x.data() + start, 1, false);
    kernels::gelu_forward(&one_tanh, x.data() + start, 1, true);
    CHECK(one_tanh == whole_tanh.data()[start]);
    kernels::silu_forward(&one_silu, x.data() + start, 1);
    CHECK(one == whole.data()[start]);
    CHECK(one_silu == whole_silu.data()[start]);
  }
}

TEST_CASE("GELU and SiLU at known points and in the far tails", "[nn][activation]") {
  // torch.nn.functional.gelu(torch.tensor([0., 1., -1., 20., -20.])) and silu of the same.
  Tensor x = Tensor::from_vector({0.0f, 1.0f, -1.0f, 20.0f, -20.0f});
  check_close(gelu(x), {0.0f, 0.8413447f, -0.1586553f, 20.0f, -0.0f}, 1e-7, 1e-6);
  check_close(gelu(x, "tanh"), {0.0f, 0.8411920f, -0.1588080f, 20.0f, -0.0f}, 1e-7, 1e-6);
  check_close(silu(x), {0.0f, 0.7310586f, -0.2689414f, 20.0f, -4.1223073e-08f}, 1e-7, 1e-6);
}

TEST_CASE("GELU refuses an unknown approximate with PyTorch's message, and the reprs are PyTorch's",
          "[nn][activation]") {
  CHECK_THROWS_WITH(nn::GELU("erf"), "GELU: approximate argument must be either none or tanh., got \"erf\"");
  CHECK_THROWS_WITH(gelu(Tensor::ones({2}), "Tanh"), "approximate argument must be either none or tanh., got \"Tanh\"");
  CHECK(nn::GELU().repr() == "GELU(approximate='none')");
  CHECK(nn::GELU("tanh").repr() == "GELU(approximate='tanh')");
  CHECK(nn::SiLU().repr() == "SiLU()");
  CHECK(nn::GELU().state_dict().empty());
}

}  // namespace test_nn_gelu_silu
