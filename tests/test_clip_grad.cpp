// clip_grad_norm_ and clip_grad_value_ against PyTorch 1.13's fixtures, and their errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "minidl/minidl.hpp"
#include "support/check.hpp"
#include "support/fixture.hpp"

namespace test_clip_grad {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::Fixture;
using nn::utils::clip_grad_norm_;
using nn::utils::clip_grad_value_;

namespace {

// Three parameters holding the fixture's gradients g0, g1, g2.
std::vector<Tensor> with_gradients(const Fixture& f) {
  std::vector<Tensor> params;
  for (int k = 0; k < 3; ++k) {
    const Tensor g = f[cat("g", k)];
    Tensor p = Tensor::zeros(g.shape()).requires_grad_();
    p.set_grad(g.clone());
    params.push_back(p);
  }
  return params;
}

// check_close, with NaN expected where the fixture has NaN.
void check_same(const Tensor& actual, const Tensor& expected) {
  const std::vector<float> a = actual.to_vector(), e = expected.to_vector();
  REQUIRE(a.size() == e.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("value " << i << ": " << a[i] << " against " << e[i]);
    if (std::isnan(e[i])) {
      CHECK(std::isnan(a[i]));
    } else {
      CHECK((a[i] == e[i] || std::fabs(a[i] - e[i]) <= 1e-6 + 1e-5 * std::fabs(e[i])));
    }
  }
}

}  // namespace

TEST_CASE("clip_grad_norm_ matches PyTorch: total norm of each order, clipped gradients", "[optim][clip]") {
  // scripts/fixtures/optim.py, clip_cases: three gradients (4, 3), (7), (2, 2, 2); L2 above and
  // below max_norm, L1, L3, L0.5, inf, tiny and huge values, an inf and a NaN entry.
  const std::vector<Fixture> fixtures = minidl::testing::fixtures_of("clip_grad_norm_");
  CHECK(fixtures.size() == 11);
  for (const Fixture& f : fixtures) {
    INFO(f.name());
    std::vector<Tensor> params = with_gradients(f);
    const nlohmann::json order = f.options().value("norm_type", nlohmann::json(2.0));
    const double norm_type = order.is_string() ? std::numeric_limits<double>::infinity() : order.get<double>();
    const Tensor total = clip_grad_norm_(params, f.options()["max_norm"].get<double>(), norm_type);
    CHECK(total.shape() == Shape{});
    check_same(total, f["total_norm"]);
    for (int k = 0; k < 3; ++k) {
      INFO("g" << k);
      check_same(params[size_t(k)].grad(), f[cat("clipped.g", k)]);
    }
  }
}

TEST_CASE("clip_grad_value_ matches PyTorch", "[optim][clip]") {
  for (const Fixture& f : minidl::testing::fixtures_of("clip_grad_value_")) {
    INFO(f.name());
    std::vector<Tensor> params = with_gradients(f);
    clip_grad_value_(params, f.options()["clip_value"].get<double>());
    for (int k = 0; k < 3; ++k) check_same(params[size_t(k)].grad(), f[cat("clipped.g", k)]);
  }
}

TEST_CASE("clip_grad_norm_ by hand: a 3-4-5 gradient clipped to norm 1, skipped parameters", "[optim][clip]") {
  Tensor p = Tensor::zeros({2}).requires_grad_(), q = Tensor::zeros({3}).requires_grad_();
  p.set_grad(Tensor::from_vector({3.0f, 4.0f}));
  const Tensor total = clip_grad_norm_({p, q}, 1.0);  // q has no gradient: skipped
  CHECK(total.item() == 5.0f);
  check_close(p.grad(), {0.6f, 0.8f}, 1e-6, 0.0);
  CHECK_FALSE(q.grad().defined());
  CHECK(clip_grad_norm_({q}, 1.0).item() == 0.0f);  // no gradient at all
}

TEST_CASE("clip_grad_norm_ errors: a non-finite norm with error_if_nonfinite, a norm_type <= 0", "[optim][clip]") {
  Tensor p = Tensor::zeros({2}).requires_grad_();
  p.set_grad(Tensor::from_vector({1.0f, std::numeric_limits<float>::infinity()}));
  REQUIRE_THROWS_WITH(clip_grad_norm_({p}, 1.0, 2.0, true),
                      Catch::Contains("total norm of order 2") && Catch::Contains("inf, non-finite"));
  CHECK(p.grad().to_vector()[0] == 1.0f);  // unchanged by the refused call
  p.set_grad(Tensor::from_vector({1.0f, std::nanf("")}));
  REQUIRE_THROWS_WITH(clip_grad_norm_({p}, 1.0, std::numeric_limits<double>::infinity(), true),
                      Catch::Contains("order inf") && Catch::Contains("nan, non-finite"));
  REQUIRE_THROWS_WITH(clip_grad_norm_({p}, 1.0, 0.0), Catch::Contains("norm_type should be > 0 or inf, got 0"));
  REQUIRE_THROWS_WITH(clip_grad_norm_({p}, 1.0, -2.0), Catch::Contains("got -2"));
}

}  // namespace test_clip_grad
