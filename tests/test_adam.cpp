// Adam and AdamW against PyTorch 1.13's trajectories for each option, their state_dict, their
// errors, and their bits on several threads.
#include <catch2/catch.hpp>
#include <memory>

#include "minidl/minidl.hpp"
#include "support/check.hpp"
#include "support/fixture.hpp"

namespace test_adam {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::Fixture;
using optim::Adam;
using optim::AdamOptions;
using optim::AdamW;
using optim::AdamWOptions;

namespace {

const std::vector<std::string> kNames = {"p0", "p1"};

// The optimizer a fixture names, with the options of its metadata over the class's defaults.
std::unique_ptr<optim::Optimizer> make_optimizer(const Fixture& f, std::vector<Tensor> params) {
  const nlohmann::json& o = f.options();
  auto fill = [&](auto options) {
    options.lr = o.value("lr", options.lr);
    if (o.contains("betas")) {
      options.beta1 = o["betas"][0];
      options.beta2 = o["betas"][1];
    }
    options.eps = o.value("eps", options.eps);
    options.weight_decay = o.value("weight_decay", options.weight_decay);
    options.amsgrad = o.value("amsgrad", options.amsgrad);
    options.maximize = o.value("maximize", options.maximize);
    return options;
  };
  if (f.module() == "AdamW") return std::make_unique<AdamW>(std::move(params), fill(AdamWOptions{}));
  return std::make_unique<Adam>(std::move(params), fill(AdamOptions{}));
}

// The fixture's loss at step k: p1's term starts at step 1 (it has no gradient at step 0).
Tensor quadratic(const Fixture& f, const std::vector<Tensor>& params, int step) {
  Tensor loss = Tensor::scalar(0.0f);
  for (size_t k = 0; k < kNames.size(); ++k)
    if (step > 0 || k == 0)
      loss = loss + sum(f["a." + kNames[k]] * params[k] * params[k]) + sum(f["b." + kNames[k]] * params[k]);
  return loss;
}

std::vector<Tensor> initial_params(const Fixture& f) {
  std::vector<Tensor> params;
  for (const std::string& k : kNames) params.push_back(f[k].detach().clone().requires_grad_());
  return params;
}

constexpr int kSteps = 6;  // scripts/fixtures/optim.py, STEPS

}  // namespace

TEST_CASE("Adam and AdamW match PyTorch's fixtures step for step, state included", "[optim][adam]") {
  // scripts/fixtures/optim.py, adam_cases: p0 (3, 4) and p1 (5) on sum(a p^2) + sum(b p),
  // each option of Adam and AdamW; the gradient and the value after each of 6 steps, then
  // the state_dict's tensors.
  std::vector<Fixture> fixtures = minidl::testing::fixtures_of("Adam");
  for (Fixture& f : minidl::testing::fixtures_of("AdamW")) fixtures.push_back(std::move(f));
  CHECK(fixtures.size() == 16);
  for (const Fixture& f : fixtures) {
    INFO(f.name());
    std::vector<Tensor> params = initial_params(f);
    auto optimizer = make_optimizer(f, params);
    for (int step = 0; step < kSteps; ++step) {
      INFO("step " << step);
      optimizer->zero_grad();
      quadratic(f, params, step).backward();
      for (size_t k = 0; k < kNames.size(); ++k)
        if (f.has(cat("step", step, ".", kNames[k], ".grad")))
          check_close(params[k].grad(), f[cat("step", step, ".", kNames[k], ".grad")], 1e-5, 1e-5);
      optimizer->step();
      for (size_t k = 0; k < kNames.size(); ++k)
        check_close(params[k], f[cat("step", step, ".", kNames[k])], 1e-6, 1e-5);
    }
    const optim::OptimizerState state = optimizer->state_dict();
    REQUIRE(state.state.size() == 2);
    for (size_t i = 0; i < 2; ++i)
      for (const auto& [name, value] : state.state[i]) {
        INFO("state " << i << " " << name);
        check_close(value, f[cat("state.", i, ".", name)], 1e-6, 1e-5);
      }
    CHECK(state.state[0].at("step").item() == float(kSteps));
    CHECK(state.state[1].at("step").item() == float(kSteps - 1));  // no gradient at step 0
    CHECK(state.state[0].count("max_exp_avg_sq") == size_t(f.options().value("amsgrad", false)));
    CHECK(f.has("state.0.max_exp_avg_sq") == f.options().value("amsgrad", false));
  }
}

TEST_CASE("Adam and AdamW defaults are PyTorch 2.x's", "[optim][adam]") {
  Tensor p = Tensor::zeros({2}).requires_grad_();
  const AdamOptions adam = Adam({p}).options();
  CHECK(adam.lr == 1e-3);
  CHECK(adam.beta1 == 0.9);
  CHECK(adam.beta2 == 0.999);
  CHECK(adam.eps == 1e-8);
  CHECK(adam.weight_decay == 0.0);
  CHECK_FALSE(adam.amsgrad);
  CHECK_FALSE(adam.maximize);
  CHECK(AdamW({p}).options().weight_decay == 1e-2);
  CHECK(AdamW({p}).options().lr == 1e-3);
}

TEST_CASE("Adam by hand: the first step moves each value by lr against its gradient's sign", "[optim][adam]") {
  // m = 0.1 g, v = 0.001 g^2; corrected: g and g^2, so p -= lr g / (|g| + eps).
  Tensor p = Tensor::from_vector({1.0f, -2.0f, 0.5f}).requires_grad_();
  p.set_grad(Tensor::from_vector({0.5f, -4.0f, 1e-3f}));
  Adam optimizer({p}, {.lr = 0.1, .eps = 0.0});
  optimizer.step();
  check_close(p, {0.9f, -1.9f, 0.4f}, 1e-6, 1e-6);
  // AdamW with weight decay 0.5: p *= 1 - 0.1 * 0.5 first.
  Tensor q = Tensor::from_vector({1.0f, -2.0f}).requires_grad_();
  q.set_grad(Tensor::from_vector({0.5f, -4.0f}));
  AdamW decoupled({q}, {.lr = 0.1, .eps = 0.0, .weight_decay = 0.5});
  decoupled.step();
  check_close(q, {0.95f - 0.1f, -1.9f + 0.1f}, 1e-6, 1e-6);
}

TEST_CASE("Adam refuses invalid options, naming the option and its value", "[optim][adam]") {
  Tensor p = Tensor::zeros({2}).requires_grad_();
  REQUIRE_THROWS_WITH(Adam({p}, {.lr = -1}), Catch::Contains("Adam: invalid learning rate: lr=-1"));
  REQUIRE_THROWS_WITH(Adam({p}, {.beta1 = 1.0}), Catch::Contains("index 0: beta1=1"));
  REQUIRE_THROWS_WITH(Adam({p}, {.beta2 = -0.1}), Catch::Contains("index 1: beta2=-0.1"));
  REQUIRE_THROWS_WITH(Adam({p}, {.eps = -1e-8}), Catch::Contains("invalid epsilon value: eps=-1e-08"));
  REQUIRE_THROWS_WITH(AdamW({p}, {.weight_decay = -0.1}),
                      Catch::Contains("AdamW: invalid weight_decay value: weight_decay=-0.1"));
  Adam optimizer({p});
  REQUIRE_THROWS_WITH(optimizer.set_lr(std::nan("")), Catch::Contains("lr=nan"));
  optimizer.set_lr(0.25);
  CHECK(optimizer.lr() == 0.25);
}

TEST_CASE("Adam steps a large parameter on several threads with the bits of one thread", "[optim][adam]") {
  const int64_t n = 200000;  // above kernels::kParallelElements: the update runs on OpenMP threads
  Generator gen(7);
  const Tensor start = Tensor::randn({n}, gen), grad = Tensor::randn({n}, gen);
  auto three_steps = [&](int threads) {
    set_num_threads(threads);
    Tensor p = start.clone().detach().requires_grad_();
    AdamW optimizer({p}, {.lr = 0.01, .amsgrad = true});
    for (int k = 0; k < 3; ++k) {
      p.set_grad(grad * float(k + 1));
      optimizer.step();
    }
    return p.to_vector();
  };
  const int saved_threads = get_num_threads();
  const std::vector<float> one = three_steps(1), two = three_steps(2);
  set_num_threads(saved_threads);
  CHECK(one == two);
}

}  // namespace test_adam
