// autograd::gradcheck, the public gradient check: it passes correct ops, fails a wrong
// backward with a report naming the worst element, and checks its own options. Its bounds
// allow for the rounding of the outputs it differences and still fail a backward 1% off (0.1%
// on ops with outputs of order 1, under tighter atol and rtol).
#include "minidl/autograd/gradcheck.hpp"
#include "minidl/autograd/node.hpp"
#include "support/check.hpp"

namespace test_gradcheck {

using namespace minidl;
using autograd::gradcheck;
using autograd::GradcheckFunction;
using autograd::GradcheckOptions;

namespace {
// y = x^2 with a backward that is right except at flat index `wrong`, where it adds 1.
Tensor square_with_bad_backward(const Tensor& x, int64_t wrong) {
  Tensor out = Tensor::empty(x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) out.data()[i] = x.data()[i] * x.data()[i];
  return record(out, "BadSquare", {x}, [x = x.detach(), wrong](const Tensor& dy) {
    Tensor dx = Tensor::empty(x.shape());
    for (int64_t i = 0; i < x.numel(); ++i)
      dx.data()[i] = 2.0f * x.data()[i] * dy.data()[i] + (i == wrong ? 1.0f : 0.0f);
    return std::vector<Tensor>{dx};
  });
}
}  // namespace

TEST_CASE("gradcheck passes correct ops of several inputs", "[gradcheck]") {
  Generator gen(3);
  const Tensor a = Tensor::randn({3, 4}, gen), b = Tensor::randn({4, 2}, gen);
  auto report = gradcheck([](const std::vector<Tensor>& in) { return tanh(matmul(in[0], in[1])); }, {a, b});
  CHECK(report.passed);
  CHECK(report.excess <= 1.0);
  CHECK(report.index >= 0);
  CHECK_THAT(report.message, Catch::StartsWith("gradcheck passed: worst element is input "));
}

TEST_CASE("gradcheck fails a wrong backward and names the worst element", "[gradcheck]") {
  Generator gen(4);
  const Tensor x = Tensor::randn({2, 3}, gen);
  auto f = [](const std::vector<Tensor>& in) { return square_with_bad_backward(in[0], 4); };
  auto report = gradcheck(f, {x.clone()}, {.raise_exception = false});
  CHECK_FALSE(report.passed);
  CHECK(report.input == 0);
  CHECK(report.index == 4);
  CHECK(report.excess > 1.0);
  CHECK_THAT(report.message, Catch::StartsWith("gradcheck failed: worst element is input 0, element 4 (flat)"));
  // Without raise_exception = false it throws the same message.
  REQUIRE_THROWS_WITH(gradcheck(f, {x.clone()}), report.message);
  // The correct backward of the same op passes.
  CHECK(
      gradcheck([](const std::vector<Tensor>& in) { return square_with_bad_backward(in[0], -1); }, {x.clone()}).passed);
}

TEST_CASE("gradcheck: a NaN fails, a constant input passes, options are checked", "[gradcheck]") {
  auto nan_op = [](const std::vector<Tensor>& in) { return log(in[0]); };  // log of a negative: NaN
  auto report = gradcheck(nan_op, {Tensor::from_vector({-1.0f, 2.0f})}, {.raise_exception = false});
  CHECK_FALSE(report.passed);
  CHECK(report.index == 0);
  // f ignores its second input: its analytic gradient is undefined, numerically 0.
  CHECK(gradcheck([](const std::vector<Tensor>& in) { return in[0] * 2.0f; },
                  {Tensor::from_vector({1.0f, 2.0f}), Tensor::from_vector({3.0f})})
            .passed);
  REQUIRE_THROWS_WITH(
      gradcheck(nan_op, {Tensor::ones({1})}, {.eps = 0.0}),
      "gradcheck: expected eps > 0, atol >= 0, rtol >= 0 and rounding_ulps >= 0, got eps 0, atol 0.0001, rtol 0.001, "
      "rounding_ulps 8");
}

TEST_CASE("gradcheck ignores a gradient its input already holds", "[gradcheck]") {
  Generator gen(5);
  Tensor x = Tensor::randn({2, 3}, gen);
  auto f = [](const std::vector<Tensor>& in) { return tanh(in[0]); };
  CHECK(gradcheck(f, {x}).passed);
  x.requires_grad_(true);
  tanh(x).sum().backward();  // x.grad is now defined; a second check must not add into it
  auto report = gradcheck(f, {x}, {.raise_exception = false});
  INFO(report.message);
  CHECK(report.passed);
}

TEST_CASE("gradcheck: an input checked twice is not credited with the first check's gradient", "[gradcheck]") {
  // The first call leaves x.grad = 2x; the second must compare 2x alone, not 4x.
  Tensor x = Tensor::from_vector({0.5f, -1.5f, 2.0f});
  auto square = [](const std::vector<Tensor>& in) { return in[0] * in[0]; };
  CHECK(gradcheck(square, {x}, {.raise_exception = false}).passed);
  CHECK(gradcheck(square, {x}, {.raise_exception = false}).passed);
}

namespace {
// y's values with its gradient times factor on the way back: f's backward made `factor` off.
Tensor scale_gradient(const Tensor& y, float factor) {
  return record(y.detach().clone(), "ScaleGradient", {y},
                [factor](const Tensor& dy) { return std::vector<Tensor>{dy * factor}; });
}

struct SizedCheck {
  std::string op;
  GradcheckFunction f;
  std::vector<Tensor> inputs;
  double step;
};

std::vector<SizedCheck> sized_checks() {
  Generator gen(11);
  auto any = [&] { return Tensor::randn({3, 4}, gen); };
  auto positive = [&] { return Tensor::rand({3, 4}, gen, 0.5f, 2.0f); };
  using Inputs = const std::vector<Tensor>&;
  const double smooth = testing::kSmoothStep;
  return {
      {"exp", [](Inputs in) { return exp(in[0]); }, {any()}, smooth},
      {"log", [](Inputs in) { return log(in[0]); }, {positive()}, smooth},
      {"sqrt", [](Inputs in) { return sqrt(in[0]); }, {positive()}, smooth},
      {"rsqrt", [](Inputs in) { return rsqrt(in[0]); }, {positive()}, smooth},
      {"sigmoid", [](Inputs in) { return sigmoid(in[0]); }, {any()}, smooth},
      {"tanh", [](Inputs in) { return tanh(in[0]); }, {any()}, smooth},
      {"pow 3", [](Inputs in) { return pow(in[0], 3.0f); }, {any()}, testing::kSteepStep},
      {"pow -1.5", [](Inputs in) { return pow(in[0], -1.5f); }, {positive()}, testing::kSteepStep},
      {"matmul", [](Inputs in) { return matmul(in[0], in[1]); }, {any(), Tensor::randn({4, 5}, gen)}, smooth},
      {"log_softmax", [](Inputs in) { return log_softmax(in[0], 1); }, {any()}, smooth},
      {"layer_norm",
       [](Inputs in) { return layer_norm(in[0], {4}, in[1], in[2]); },
       {any(), Tensor::randn({4}, gen, 1.0f, 0.3f), Tensor::randn({4}, gen)},
       smooth},
      {"conv2d",
       [](Inputs in) { return conv2d(in[0], in[1], in[2], 1, 1); },
       {Tensor::randn({2, 3, 5, 6}, gen), Tensor::randn({4, 3, 3, 3}, gen), Tensor::randn({4}, gen)},
       testing::kLinearStep},
      {"group_norm, one group of 36",
       [](Inputs in) { return group_norm(in[0], 1, in[1], in[2]); },
       {Tensor::randn({2, 6, 2, 3}, gen), Tensor::randn({6}, gen, 1.0f, 0.3f), Tensor::randn({6}, gen)},
       smooth},
  };
}
}  // namespace

TEST_CASE("gradcheck's bounds pass each op's backward and fail it made 1% off", "[gradcheck]") {
  for (const SizedCheck& c : sized_checks()) {
    INFO(c.op << ": eps " << c.step);
    testing::check_gradients(c.f, c.inputs, c.step);
    for (float factor : {1.01f, 0.99f}) {
      const auto off = [&](const std::vector<Tensor>& in) { return scale_gradient(c.f(in), factor); };
      const auto report = gradcheck(off, c.inputs, {.eps = c.step, .raise_exception = false});
      INFO("backward times " << factor << ": " << report.message);
      CHECK_FALSE(report.passed);
    }
  }
}

TEST_CASE("on outputs of order 1 the rounding allowance leaves room to fail a backward 0.1% off", "[gradcheck]") {
  // rtol 1e-4 covers these ops' truncation (|F''' / F'| <= 1 for exp and sigmoid, so 1.7e-5
  // relative at h = 1e-2; none for matmul). The rounding allowance, 8 u |f| |v| / h per output
  // moved, is 5e-5 |f| |v| at h = 1e-2: a few 1e-4 of the gradient at most.
  Generator gen(12);
  using Inputs = const std::vector<Tensor>&;
  const std::vector<SizedCheck> checks = {
      {"exp", [](Inputs in) { return exp(in[0]); }, {Tensor::randn({3, 4}, gen)}, testing::kSmoothStep},
      {"sigmoid", [](Inputs in) { return sigmoid(in[0]); }, {Tensor::randn({3, 4}, gen)}, testing::kSmoothStep},
      {"matmul",
       [](Inputs in) { return matmul(in[0], in[1]); },
       {Tensor::randn({3, 4}, gen), Tensor::randn({4, 5}, gen)},
       testing::kLinearStep},
  };
  for (const SizedCheck& c : checks) {
    const GradcheckOptions tight{.eps = c.step, .atol = 1e-5, .rtol = 1e-4, .raise_exception = false};
    const auto right = gradcheck(c.f, c.inputs, tight);
    INFO(c.op << ": " << right.message);
    CHECK(right.passed);
    for (float factor : {1.001f, 0.999f}) {
      const auto off = [&](const std::vector<Tensor>& in) { return scale_gradient(c.f(in), factor); };
      const auto report = gradcheck(off, c.inputs, tight);
      INFO("backward times " << factor << ": " << report.message);
      CHECK_FALSE(report.passed);
    }
  }
}

TEST_CASE("gradcheck allows for the rounding of the outputs it differences", "[gradcheck]") {
  // y = x + 1000: the outputs round to 2^-14 = 6.1e-5 apart, so a difference quotient can be
  // off by 6.1e-5 |v| / 2h = 3e-3 |v| at h = 1e-2, past atol + rtol |numeric| (1.1e-3 for
  // |v| = 1), although the backward (1) is exact.
  Generator gen(13);
  const Tensor x = Tensor::randn({4, 5}, gen);
  auto shifted = [](const std::vector<Tensor>& in) { return in[0] + 1000.0f; };
  const auto without = gradcheck(shifted, {x.clone()}, {.rounding_ulps = 0.0, .raise_exception = false});
  INFO(without.message);
  CHECK_FALSE(without.passed);
  const auto report = gradcheck(shifted, {x.clone()}, {.raise_exception = false});
  INFO(report.message);
  CHECK(report.passed);
  // The allowance is 8 u (|y(x_i + h)| + |y(x_i - h)|) |v_i| / (x_i + h - (x_i - h)), from the
  // one output x_i moves; v is gradcheck's draw (seed 1234).
  Generator v_gen(1234);
  const Tensor v = Tensor::randn({4, 5}, v_gen);
  const float xi = x.data()[report.index];
  const float up = float(double(xi) + 1e-2), down = float(double(xi) - 1e-2);
  const double moved = (double(up + 1000.0f) + double(down + 1000.0f)) * std::abs(double(v.data()[report.index]));
  CHECK(report.rounding == Approx(8.0 * 0x1p-24 * moved / (double(up) - double(down))).epsilon(1e-12));
}

}  // namespace test_gradcheck
