// Dropout: train and eval, its seeded stream, the 1 / (1 - p) scaling, p = 0 and p = 1, the
// refused p, and its gradient.
#include <catch2/catch.hpp>
#include <cmath>

#include "minidl/minidl.hpp"
#include "support/check.hpp"

namespace test_nn_dropout {

using namespace minidl;
using minidl::testing::check_close;

namespace {

int64_t kept_count(const Tensor& y) {
  int64_t kept = 0;
  for (int64_t i = 0; i < y.numel(); ++i) kept += y.data()[i] != 0.0f;
  return kept;
}

}  // namespace

TEST_CASE("Dropout keeps each element with probability 1 - p and scales it by 1 / (1 - p)", "[nn][dropout]") {
  const int64_t n = 20000;
  for (double p : {0.1, 0.5, 0.8}) {
    INFO("p " << p);
    nn::Dropout drop(p, std::make_shared<Generator>(7));
    Tensor x = Tensor::ones({n});
    Tensor y = drop(x);
    const float scale = 1.0f / float(1.0 - p);
    for (int64_t i = 0; i < n; ++i) {
      const float v = y.data()[i];
      if (v != 0.0f && v != scale) FAIL("element " << i << " is " << v << ", expected 0 or " << scale);
    }
    // The kept count is Binomial(n, 1 - p): within 5 standard deviations.
    const double expected = double(n) * (1.0 - p), sd = std::sqrt(double(n) * p * (1.0 - p));
    CHECK(std::abs(double(kept_count(y)) - expected) < 5.0 * sd);
    // The mean is kept in expectation: within 5 standard deviations of 1.
    CHECK(std::abs(mean(y).item() - 1.0) < 5.0 * std::sqrt(p / (1.0 - p) / double(n)));
  }
}

TEST_CASE("Dropout in eval mode and with p = 0 passes its input unchanged", "[nn][dropout]") {
  Tensor x = Tensor::from_vector({1.0f, -2.0f, 3.0f, 4.0f}, {2, 2});
  nn::Dropout drop(0.5);
  drop.eval();
  CHECK(drop(x).same(x));
  nn::Dropout none(0.0);
  CHECK(none(x).same(x));
  CHECK(dropout(x, 0.3, /*training=*/false).same(x));
}

TEST_CASE("Dropout with p = 1 gives zeros and a zero gradient", "[nn][dropout]") {
  Tensor x = Tensor::from_vector({1.0f, -2.0f, 3.0f, 4.0f}).requires_grad_();
  Tensor y = nn::Dropout(1.0)(x);
  check_close(y, {0.0f, 0.0f, 0.0f, 0.0f}, 0.0, 0.0);
  sum(y).backward();
  check_close(x.grad(), {0.0f, 0.0f, 0.0f, 0.0f}, 0.0, 0.0);
}

TEST_CASE("Dropout's gradient is the mask it drew, scaled", "[nn][dropout]") {
  Generator gen(11);
  Tensor x = Tensor::randn({50}, gen).requires_grad_();
  Tensor y = dropout(x, 0.4, true, gen);
  Tensor w = Tensor::randn({50}, gen);
  sum(y * w).backward();
  for (int64_t i = 0; i < 50; ++i) {
    const bool kept = y.data()[i] != 0.0f;
    const float expected = kept ? w.data()[i] / 0.6f : 0.0f;
    CHECK(x.grad().data()[i] == Approx(expected).epsilon(1e-6));
    if (kept) CHECK(y.data()[i] == Approx(x.data()[i] / 0.6f).epsilon(1e-6));
  }
}

TEST_CASE("Dropout draws from its own stream: the same seed gives the same mask", "[nn][dropout]") {
  Tensor x = Tensor::ones({64});
  auto shared = std::make_shared<Generator>(3);
  nn::Dropout a(0.5, shared), b(0.5, std::make_shared<Generator>(3)), c(0.5, std::make_shared<Generator>(4));
  Tensor first = a(x);
  check_close(b(x), first, 0.0, 0.0);
  CHECK(kept_count(c(x) - first) > 0);  // another seed, another mask
  // The default stream is untouched by a Dropout with its own.
  manual_seed(9);
  const float before = default_generator().uniform();
  manual_seed(9);
  (void)a(x);
  CHECK(default_generator().uniform() == before);
  // Without a stream of its own it draws from default_generator(), seeded by manual_seed.
  manual_seed(2);
  Tensor d1 = nn::Dropout(0.5)(x);
  manual_seed(2);
  check_close(nn::Dropout(0.5)(x), d1, 0.0, 0.0);
}

TEST_CASE("Dropout refuses p below 0 or above 1 with PyTorch's message", "[nn][dropout]") {
  CHECK_THROWS_WITH(nn::Dropout(1.5), "dropout probability has to be between 0 and 1, but got 1.5");
  CHECK_THROWS_WITH(nn::Dropout(-0.1), "dropout probability has to be between 0 and 1, but got -0.1");
  CHECK_THROWS_WITH(dropout(Tensor::ones({2}), std::nan("")),
                    "dropout probability has to be between 0 and 1, but got nan");
  CHECK(nn::Dropout(0.25).repr() == "Dropout(p=0.25, inplace=False)");
  CHECK(nn::Dropout().repr() == "Dropout(p=0.5, inplace=False)");
}

}  // namespace test_nn_dropout
