// nn::init: the statistics of each initializer (mean, std, bounds, with tolerances from the
// sample size), PyTorch's gains, fans and bounds, orthogonality, the messages, and
// nn::Linear's default init drawing the same bits as before it used nn::init.
#include <catch2/catch.hpp>
#include <cmath>

#include "minidl/minidl.hpp"
#include "support/check.hpp"

namespace test_nn_init {

using namespace minidl;
namespace init = minidl::nn::init;

namespace {

struct Moments {
  double mean = 0.0, std = 0.0, min = 0.0, max = 0.0;
};

Moments moments(const Tensor& t) {
  Moments m{0.0, 0.0, t.data()[0], t.data()[0]};
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    m.mean += t.data()[i];
    m.min = std::min(m.min, double(t.data()[i]));
    m.max = std::max(m.max, double(t.data()[i]));
  }
  m.mean /= double(n);
  for (int64_t i = 0; i < n; ++i) m.std += (t.data()[i] - m.mean) * (t.data()[i] - m.mean);
  m.std = std::sqrt(m.std / double(n - 1));
  return m;
}

// The sample mean within 5 standard errors of `mean`, the sample std within 5 of its own
// standard error (relative sd(s) / sigma ~ sqrt((kurtosis - 1) / (4 n)); kurtosis 1.8 for a
// uniform, 3 for a normal distribution).
void check_distribution(const Tensor& t, double mean, double std, double kurtosis) {
  const Moments m = moments(t);
  const double n = double(t.numel());
  INFO("sample mean " << m.mean << ", std " << m.std << "; expected " << mean << ", " << std);
  CHECK(std::abs(m.mean - mean) < 5.0 * std / std::sqrt(n));
  CHECK(std::abs(m.std / std - 1.0) < 5.0 * std::sqrt((kurtosis - 1.0) / (4.0 * n)));
}

// Every value in [-bound, bound], and the extremes near it (with n values, the chance that
// none lies in the top 1% of a uniform's range is 0.99^n).
void check_uniform_bound(const Tensor& t, double bound) {
  const Moments m = moments(t);
  INFO("min " << m.min << ", max " << m.max << ", bound " << bound);
  CHECK(m.min >= -float(bound));
  CHECK(m.max <= float(bound));
  CHECK(m.max > 0.99 * bound);
  CHECK(m.min < -0.99 * bound);
}

}  // namespace

TEST_CASE("calculate_gain gives PyTorch's gains", "[nn][init]") {
  // torch.nn.init.calculate_gain(...)
  CHECK(init::calculate_gain("linear") == 1.0);
  CHECK(init::calculate_gain("conv2d") == 1.0);
  CHECK(init::calculate_gain("conv_transpose3d") == 1.0);
  CHECK(init::calculate_gain("sigmoid") == 1.0);
  CHECK(init::calculate_gain("tanh") == 5.0 / 3.0);
  CHECK(init::calculate_gain("relu") == std::sqrt(2.0));
  CHECK(init::calculate_gain("selu") == 0.75);
  CHECK(init::calculate_gain("leaky_relu") == Approx(1.4141428569978354).epsilon(1e-15));
  CHECK(init::calculate_gain("leaky_relu", std::sqrt(5.0)) == Approx(0.5773502691896257).epsilon(1e-15));
  CHECK(init::calculate_gain("leaky_relu", 0.0) == std::sqrt(2.0));
  CHECK_THROWS_WITH(init::calculate_gain("gelu"), "Unsupported nonlinearity gelu");
  CHECK_THROWS_WITH(init::calculate_gain("leaky_relu", INFINITY), "negative_slope inf not a valid number");
}

TEST_CASE("calculate_fan_in_and_fan_out multiplies by the receptive field", "[nn][init]") {
  // torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(3, 4, 5, 6)) == (120, 90)
  CHECK(init::calculate_fan_in_and_fan_out(Tensor::empty({3, 4, 5, 6})) == std::pair<int64_t, int64_t>{120, 90});
  CHECK(init::calculate_fan_in_and_fan_out(Tensor::empty({10, 64})) == std::pair<int64_t, int64_t>{64, 10});
  CHECK_THROWS_WITH(init::calculate_fan_in_and_fan_out(Tensor::empty({3})),
                    "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions, got shape [3]");
  CHECK_THROWS_WITH(init::xavier_uniform_(Tensor::empty({3})),
                    "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions, got shape [3]");
}

TEST_CASE("uniform_, normal_, constant_, zeros_ and ones_ fill with their distribution", "[nn][init]") {
  Generator gen(1);
  Tensor t = Tensor::empty({200, 300});
  init::uniform_(t, -2.0, 3.0, gen);
  check_distribution(t, 0.5, 5.0 / std::sqrt(12.0), 1.8);
  const Moments u = moments(t);
  CHECK(u.min >= -2.0);
  CHECK(u.max < 3.0);
  init::uniform_(t, 0.0, 1.0, gen);
  check_distribution(t, 0.5, 1.0 / std::sqrt(12.0), 1.8);
  init::normal_(t, 1.5, 0.25, gen);
  check_distribution(t, 1.5, 0.25, 3.0);
  init::constant_(t, 0.125);
  CHECK(moments(t).min == 0.125);
  CHECK(moments(t).max == 0.125);
  init::zeros_(t);
  CHECK(moments(t).max == 0.0);
  init::ones_(t);
  CHECK(moments(t).min == 1.0);
}

TEST_CASE("xavier_uniform_ and xavier_normal_ follow PyTorch's formulas", "[nn][init]") {
  Generator gen(2);
  Tensor w = Tensor::empty({300, 200});
  // PyTorch: std = gain * sqrt(2 / (fan_in + fan_out)); tanh's gain 5/3 on (300, 200):
  // bound = sqrt 3 std = 5/3 sqrt(6 / 500) = 0.18257418583505536.
  init::xavier_uniform_(w, init::calculate_gain("tanh"), gen);
  check_uniform_bound(w, 0.18257418583505536);
  check_distribution(w, 0.0, 0.18257418583505536 / std::sqrt(3.0), 1.8);
  init::xavier_normal_(w, 1.0, gen);
  check_distribution(w, 0.0, std::sqrt(2.0 / 500.0), 3.0);
  // A convolution's weight (out, in, kh, kw): fans times the receptive field.
  Tensor conv = Tensor::empty({64, 32, 3, 3});
  init::xavier_normal_(conv, 1.0, gen);
  check_distribution(conv, 0.0, std::sqrt(2.0 / (32.0 * 9.0 + 64.0 * 9.0)), 3.0);
}

TEST_CASE("kaiming_uniform_ and kaiming_normal_ follow PyTorch's formulas", "[nn][init]") {
  Generator gen(3);
  // kaiming_uniform_(torch.empty(256, 4, 3, 3), nonlinearity='relu'): fan_in 36,
  // bound = sqrt 3 * sqrt 2 / 6 = 0.408248290463863.
  Tensor conv = Tensor::empty({256, 4, 3, 3});
  init::kaiming_uniform_(conv, 0.0, "fan_in", "relu", gen);
  check_uniform_bound(conv, 0.408248290463863);
  check_distribution(conv, 0.0, 0.408248290463863 / std::sqrt(3.0), 1.8);
  // fan_out: 256 * 9 = 2304; std = sqrt 2 / 48.
  init::kaiming_normal_(conv, 0.0, "fan_out", "relu", gen);
  check_distribution(conv, 0.0, std::sqrt(2.0) / 48.0, 3.0);
  // The default nonlinearity is leaky_relu with slope a: a = 0 is relu's gain.
  Tensor w = Tensor::empty({400, 100});
  init::kaiming_normal_(w, 0.0, "fan_in", "leaky_relu", gen);
  check_distribution(w, 0.0, std::sqrt(2.0) / 10.0, 3.0);
  // tanh's gain: the lesson's lab initializes its deep tanh net with it.
  init::kaiming_uniform_(w, 0.0, "fan_in", "tanh", gen);
  check_uniform_bound(w, std::sqrt(3.0) * (5.0 / 3.0) / 10.0);
  CHECK_THROWS_WITH(init::kaiming_uniform_(w, 0.0, "fan_avg"),
                    "Mode fan_avg not supported, please use one of ['fan_in', 'fan_out']");
  CHECK_THROWS_WITH(init::kaiming_normal_(w, 0.0, "fan_in", "swish"), "Unsupported nonlinearity swish");
  // A tensor with no elements is left as it is (PyTorch warns and returns it).
  Tensor empty = Tensor::empty({0, 3});
  CHECK(init::kaiming_uniform_(empty).same(empty));
}

TEST_CASE("orthogonal_ gives Q of the QR of a normal draw, R's diagonal positive", "[nn][init]") {
  for (const Shape& shape : {Shape{8, 5}, Shape{5, 8}, Shape{6, 2, 3}, Shape{4, 4}}) {
    INFO("shape " << to_string(shape));
    Tensor q = Tensor::empty(shape);
    Generator gen(4), same(4);
    init::orthogonal_(q, 2.0, gen);
    const int64_t rows = shape[0], cols = q.numel() / rows;
    Tensor drawn = Tensor::randn({rows, cols}, same);  // what orthogonal_ drew
    Tensor qm = q.reshape({rows, cols}) * 0.5f;        // without the gain
    const bool wide = rows < cols;
    Tensor tall_q = wide ? transpose(qm, 0, 1) : qm;        // (m, n), m >= n
    Tensor tall_a = wide ? transpose(drawn, 0, 1) : drawn;  // (m, n)
    const int64_t n = tall_q.size(1);
    // Orthonormal columns: Q^T Q = I.
    Tensor gram = matmul(transpose(tall_q, 0, 1), tall_q);  // (n, n)
    Tensor r = matmul(transpose(tall_q, 0, 1), tall_a);     // (n, n): R of A = QR
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        CHECK(gram.data()[i * n + j] == Approx(i == j ? 1.0 : 0.0).margin(1e-5));
        if (i > j) CHECK(r.data()[i * n + j] == Approx(0.0).margin(1e-4));
      }
    for (int64_t i = 0; i < n; ++i) CHECK(r.data()[i * n + i] > 0.0f);
    // and Q R gives back A.
    minidl::testing::check_close(matmul(tall_q, r), tall_a, 1e-4, 1e-4);
  }
  CHECK_THROWS_WITH(init::orthogonal_(Tensor::empty({4})),
                    "Only tensors with 2 or more dimensions are supported, got shape [4]");
}

TEST_CASE("init writes outside the graph and bumps the version", "[nn][init]") {
  Tensor w = Tensor::zeros({3, 4}).requires_grad_();
  const uint32_t before = w.version();
  init::kaiming_uniform_(w, std::sqrt(5.0));  // a leaf that requires grad: allowed, as PyTorch's no_grad
  CHECK(w.version() > before);
  CHECK(w.is_leaf());
}

TEST_CASE("Linear's default init is kaiming_uniform_(a = sqrt 5) with the same bits as U(-1/sqrt(in), 1/sqrt(in))",
          "[nn][init]") {
  // The lesson's figures depend on these draws: weight first, row-major, then the bias.
  for (int64_t in : {1, 7, 64, 1000}) {
    INFO("in_features " << in);
    Generator gen(5), same(5);
    nn::Linear layer(in, 3, gen);
    const float bound = float(1.0 / std::sqrt(double(in)));
    Tensor w = Tensor::rand({3, in}, same, -bound, bound);
    Tensor b = Tensor::rand({3}, same, -bound, bound);
    minidl::testing::check_close(layer.weight, w, 0.0, 0.0);
    minidl::testing::check_close(layer.bias, b, 0.0, 0.0);
  }
}

}  // namespace test_nn_init
