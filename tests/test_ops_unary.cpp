// neg/exp/log/sqrt/rsqrt/pow/tanh/relu/sigmoid: values and gradients.
#include <cmath>

#include "support/check.hpp"

namespace test_ops_unary {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

TEST_CASE("unary ops give hand-worked values", "[ops]") {
  Tensor x = Tensor::from_vector({-2, -0.5f, 0, 1, 3});
  check_close(neg(x), {2, 0.5f, 0, -1, -3}, 0, 0);
  check_close(-x, {2, 0.5f, 0, -1, -3}, 0, 0);
  check_close(exp(x), {0.13533528f, 0.60653066f, 1, 2.7182818f, 20.085537f}, 0, 1e-6);
  check_close(relu(x), {0, 0, 0, 1, 3}, 0, 0);
  check_close(tanh(x), {-0.96402758f, -0.46211716f, 0, 0.76159416f, 0.99505475f}, 0, 1e-6);
  check_close(sigmoid(x), {0.11920292f, 0.37754067f, 0.5f, 0.73105858f, 0.95257413f}, 0, 1e-6);
  Tensor p = Tensor::from_vector({0.25f, 1, 4, 9});
  check_close(log(p), {-1.3862944f, 0, 1.3862944f, 2.1972246f}, 1e-7, 1e-6);
  check_close(sqrt(p), {0.5f, 1, 2, 3}, 0, 1e-7);
  check_close(rsqrt(p), {2, 1, 0.5f, 1.0f / 3}, 0, 1e-7);
  check_close(pow(p, 2.0f), {0.0625f, 1, 16, 81}, 0, 1e-7);
  check_close(pow(p, 0.5f), {0.5f, 1, 2, 3}, 0, 1e-7);
  check_close(pow(p, -1.0f), {4, 1, 0.25f, 1.0f / 9}, 0, 1e-7);
  check_close(pow(p, 0.0f), {1, 1, 1, 1}, 0, 0);
  check_close(pow(Tensor::from_vector({-2, 3}), 3.0f), {-8, 27}, 0, 0);
}

TEST_CASE("unary ops at the edges of their range", "[ops]") {
  check_close(sigmoid(Tensor::from_vector({-100, 100})), {0, 1}, 1e-30, 0);
  check_close(tanh(Tensor::from_vector({-50, 50})), {-1, 1}, 0, 0);
  Tensor l = log(Tensor::from_vector({0}));
  CHECK(std::isinf(l.item()));
  CHECK(l.item() < 0);
  CHECK(std::isnan(sqrt(Tensor::from_vector({-1})).item()));
  Tensor big = Tensor::full({100000}, 2.0f);  // the OpenMP path gives the same values
  check_close(exp(big), std::vector<float>(100000, std::exp(2.0f)), 0, 0);
}

TEST_CASE("gradients of unary ops by finite differences", "[ops][autograd]") {
  Generator gen(5);
  auto any = [&] { return Tensor::randn({3, 4}, gen); };
  auto positive = [&] { return Tensor::rand({3, 4}, gen, 0.5f, 2.0f); };
  // Away from relu's kink at 0: magnitudes in [0.1, 1] with random signs.
  auto off_zero = [&] {
    Tensor x = Tensor::rand({3, 4}, gen, 0.1f, 1.0f);
    Tensor sign = Tensor::randint(0, 2, {3, 4}, gen) * 2.0f - 1.0f;
    return mul(x, sign);
  };
  using Inputs = const std::vector<Tensor>&;
  check_gradients([](Inputs in) { return neg(in[0]); }, {any()});
  check_gradients([](Inputs in) { return exp(in[0]); }, {any()});
  check_gradients([](Inputs in) { return log(in[0]); }, {positive()});
  check_gradients([](Inputs in) { return sqrt(in[0]); }, {positive()});
  check_gradients([](Inputs in) { return rsqrt(in[0]); }, {positive()});
  check_gradients([](Inputs in) { return pow(in[0], 2.0f); }, {any()}, testing::kSteepStep);
  check_gradients([](Inputs in) { return pow(in[0], 3.0f); }, {any()}, testing::kSteepStep);
  check_gradients([](Inputs in) { return pow(in[0], -1.5f); }, {positive()}, testing::kSteepStep);
  check_gradients([](Inputs in) { return pow(in[0], 0.5f); }, {positive()}, testing::kSteepStep);
  check_gradients([](Inputs in) { return tanh(in[0]); }, {any()});
  check_gradients([](Inputs in) { return relu(in[0]); }, {off_zero()});
  check_gradients([](Inputs in) { return sigmoid(in[0]); }, {any()});
  // pow with exponent 0 is constant: its gradient is exactly zero.
  Tensor x = Tensor::from_vector({1.5f, -2}).requires_grad_();
  sum(pow(x, 0.0f)).backward();
  check_close(x.grad(), {0, 0}, 0, 0);
}

TEST_CASE("relu passes no gradient where its input is negative", "[ops][autograd]") {
  Tensor x = Tensor::from_vector({-1, 2, -3, 4}).requires_grad_();
  sum(relu(x) * Tensor::from_vector({10, 20, 30, 40})).backward();
  check_close(x.grad(), {0, 20, 0, 40}, 0, 0);
}

}  // namespace test_ops_unary
