// grad_output_buffer: a backward overwrites the gradient it was handed only when nothing
// but the engine holds it; a gradient someone kept keeps its values.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "minidl/minidl.hpp"

using namespace minidl;

namespace {

std::vector<float> values(const Tensor& t) { return {t.data(), t.data() + t.numel()}; }

// d/dx sum(tanh(tanh(x))) = (1 - tanh(tanh(x))^2) (1 - tanh(x)^2), in double.
double chain_gradient(double x) {
  const double inner = std::tanh(x), outer = std::tanh(inner);
  return (1.0 - outer * outer) * (1.0 - inner * inner);
}

}  // namespace

TEST_CASE("grad_output_buffer hands back the gradient itself only when nothing else holds it", "[autograd]") {
  const Tensor alone = Tensor::full({2, 3}, 1.0f);
  CHECK(grad_output_buffer(alone).same(alone));
  const Tensor kept = alone;  // a second handle: a hook's or another node's
  const Tensor fresh = grad_output_buffer(alone);
  CHECK_FALSE(fresh.same(alone));
  CHECK(fresh.shape() == alone.shape());
  const Tensor whole = Tensor::full({6}, 1.0f);
  const Tensor view = whole.reshape({2, 3});  // shares whole's buffer
  CHECK_FALSE(grad_output_buffer(view).same(view));
}

TEST_CASE("a backward written in place leaves a gradient a hook kept as it was", "[autograd]") {
  const std::vector<float> x0{-1.5f, -0.25f, 0.5f, 2.0f};
  Tensor x = Tensor::from_vector(x0).requires_grad_();
  Tensor inner = tanh(x);
  std::vector<Tensor> kept;  // holds the very gradient tanh's backward is handed next
  inner.register_hook([&kept](const Tensor& g) { kept.push_back(g); });
  Tensor outer = tanh(inner);
  sum(outer).backward();
  REQUIRE(kept.size() == 1);
  for (size_t i = 0; i < x0.size(); ++i) {
    const double y = std::tanh(std::tanh(double(x0[i])));
    CHECK(kept[0].data()[i] == Approx(1.0 - y * y).epsilon(1e-6));  // d sum(outer) / d inner
    CHECK(x.grad().data()[i] == Approx(chain_gradient(x0[i])).epsilon(1e-6));
  }
}

TEST_CASE("a backward written in place gives the same bits as one into a new buffer", "[autograd]") {
  // Tanh's backward takes its gradient in place; with a hook holding that gradient it writes
  // a new buffer instead. Both give the weight the same gradient.
  Generator gen(7);
  const Tensor x = Tensor::randn({5, 4}, gen);
  const Tensor w = Tensor::randn({3, 4}, gen), b = Tensor::randn({3}, gen);
  auto weight_grad = [&](bool hold) {
    Tensor wl = w.clone().requires_grad_(), bl = b.clone().requires_grad_();
    Tensor hidden = tanh(linear(x, wl, bl));
    std::vector<Tensor> held;
    if (hold) hidden.register_hook([&held](const Tensor& g) { held.push_back(g); });
    Tensor out = tanh(linear(hidden, Tensor::randn({2, 3}, gen).requires_grad_(), Tensor()));
    sum(out * out).backward();
    if (hold) REQUIRE(held.size() == 1);
    return std::pair{values(wl.grad()), values(bl.grad())};
  };
  Generator saved = gen;
  const auto in_place = weight_grad(false);
  gen = saved;
  const auto apart = weight_grad(true);
  CHECK(in_place == apart);
}
