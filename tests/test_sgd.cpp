// SGD against PyTorch 1.13's trajectories for each option, its errors, and its bookkeeping.
#include <catch2/catch.hpp>

#include "minidl/minidl.hpp"
#include "support/check.hpp"
#include "support/fixture.hpp"

namespace test_sgd {

using namespace minidl;
using minidl::testing::check_close;
using optim::SGD;
using optim::SGDOptions;

namespace {

// loss = sum(a p^2) + sum(c p), negated when maximizing (so every run descends it).
Tensor quadratic(const Tensor& p, bool negate) {
  Tensor a = Tensor::from_vector({1.0f, 0.5f, 2.0f});
  Tensor c = Tensor::from_vector({0.3f, -0.1f, 0.2f});
  Tensor loss = sum(a * p * p) + sum(c * p);
  return negate ? -loss : loss;
}

// The parameter after each of 5 steps from p = [0.5, -1, 2]: (5, 3).
Tensor trajectory(const SGDOptions& options) {
  Tensor p = Tensor::from_vector({0.5f, -1.0f, 2.0f}).requires_grad_();
  SGD optimizer({p}, options);
  std::vector<float> steps;
  for (int k = 0; k < 5; ++k) {
    optimizer.zero_grad();
    quadratic(p, options.maximize).backward();
    optimizer.step();
    for (float v : p.to_vector()) steps.push_back(v);
  }
  return Tensor::from_vector(steps, {5, 3});
}

struct Run {
  const char* name;
  SGDOptions options;
  std::vector<float> expected;  // (5, 3)
};

// Produced by PyTorch 1.13:
//   a = torch.tensor([1.0, 0.5, 2.0]); c = torch.tensor([0.3, -0.1, 0.2])
//   p = torch.tensor([0.5, -1.0, 2.0], requires_grad=True); opt = torch.optim.SGD([p], **kw)
//   for k in range(5):
//       opt.zero_grad(); loss = (a * p * p).sum() + (c * p).sum()
//       if kw.get("maximize"): loss = -loss
//       loss.backward(); opt.step(); print(p)
const std::vector<Run> kRuns = {
    {"plain",
     {.lr = 0.1},
     {0.37f, -0.88999999f, 1.1799999f, 0.266f, -0.79100001f, 0.6879999f, 0.18279999f, -0.70190001f, 0.39279994f,
      0.11623999f, -0.62171f, 0.21567997f, 0.062991992f, -0.54953903f, 0.10940799f}},
    {"momentum",
     {.lr = 0.1, .momentum = 0.9},
     {0.37f, -0.88999999f, 1.1799999f, 0.149f, -0.69199997f, -0.049999993f, -0.10969999f, -0.43459997f, -1.1569998f,
      -0.35058996f, -0.14947997f, -1.7104998f, -0.52727294f, 0.13207603f, -1.5444497f}},
    {"dampening",
     {.lr = 0.1, .momentum = 0.9, .dampening = 0.3},
     {0.37f, -0.88999999f, 1.1799999f, 0.18020001f, -0.72170001f, 0.097599991f, -0.036847971f, -0.51271099f,
      -0.91788787f, -0.24803244f, -0.2817311f, -1.5888183f, -0.42437389f, -0.047128048f, -1.7617866f}},
    {"nesterov",
     {.lr = 0.1, .momentum = 0.9, .nesterov = true},
     {0.25300002f, -0.79100001f, 0.44200009f, -0.0054400004f, -0.53261f, -0.59611988f, -0.22042881f, -0.2600531f,
      -0.93825668f, -0.36113501f, -0.0032767139f, -0.76770788f, -0.42021644f, 0.21503982f, -0.38852838f}},
    {"weight_decay",
     {.lr = 0.1, .weight_decay = 0.05},
     {0.36750001f, -0.88499999f, 1.17f, 0.26216251f, -0.78207499f, 0.67614996f, 0.17841919f, -0.68995714f, 0.38230923f,
      0.11184325f, -0.60751164f, 0.20747399f, 0.05891538f, -0.53372294f, 0.10344702f}},
    {"maximize",
     {.lr = 0.1, .maximize = true},
     {0.37f, -0.88999999f, 1.1799999f, 0.266f, -0.79100001f, 0.6879999f, 0.18279999f, -0.70190001f, 0.39279994f,
      0.11623999f, -0.62171f, 0.21567997f, 0.062991992f, -0.54953903f, 0.10940799f}},
    {"all",
     {.lr = 0.05, .momentum = 0.8, .weight_decay = 0.05, .nesterov = true, .maximize = true},
     {0.38075f, -0.89649999f, 1.253f, 0.24110162f, -0.76598072f, 0.51268154f, 0.10112116f, -0.62183315f, -0.073459715f,
      -0.024749732f, -0.47492304f, -0.44254223f, -0.12758818f, -0.33363172f, -0.59840202f}},
    {"momentum_decay_dampening",
     {.lr = 0.2, .momentum = 0.5, .dampening = 0.5, .weight_decay = 0.1},
     {0.23000002f, -0.75999999f, 0.32000005f, 0.016700026f, -0.54639995f, -0.67119992f, -0.12345698f, -0.36949593f,
      -0.91160792f, -0.19760953f, -0.23039937f, -0.67805272f, -0.2231878f, -0.12550716f, -0.3032735f}},
};

}  // namespace

TEST_CASE("SGD follows PyTorch's trajectory for each option", "[optim]") {
  for (const Run& run : kRuns) {
    INFO(run.name);
    check_close(trajectory(run.options), run.expected, 1e-6, 1e-5);
  }
}

TEST_CASE("SGD by hand: one plain step is p - lr g", "[optim]") {
  Tensor p = Tensor::from_vector({1.0f, -2.0f}).requires_grad_();
  p.set_grad(Tensor::from_vector({0.5f, 4.0f}));
  SGD optimizer({p}, {.lr = 0.1});
  optimizer.step();
  check_close(p, {0.95f, -2.4f}, 1e-7, 0.0);
}

TEST_CASE("SGD skips parameters without a gradient, and starts their momentum later", "[optim]") {
  // p = torch.tensor([0.5, -1.0, 2.0], requires_grad=True); q = torch.tensor([1.0, -2.0], requires_grad=True)
  // opt = torch.optim.SGD([p, q], lr=0.1, momentum=0.9)
  // for k in range(3):
  //     opt.zero_grad(); loss = (a * p * p).sum() + (c * p).sum()
  //     if k > 0: loss = loss + (q * q).sum()
  //     loss.backward(); opt.step()
  // -> p [-0.10969999, -0.43459997, -1.1569998], q [0.46000001, -0.92000002]
  Tensor p = Tensor::from_vector({0.5f, -1.0f, 2.0f}).requires_grad_();
  Tensor q = Tensor::from_vector({1.0f, -2.0f}).requires_grad_();
  SGD optimizer({p, q}, {.lr = 0.1, .momentum = 0.9});
  for (int k = 0; k < 3; ++k) {
    optimizer.zero_grad();
    Tensor loss = quadratic(p, false);
    if (k > 0) loss = loss + sum(q * q);
    loss.backward();
    optimizer.step();
    if (k == 0) check_close(q, {1.0f, -2.0f}, 0.0, 0.0);  // untouched
  }
  check_close(p, {-0.10969999f, -0.43459997f, -1.1569998f}, 1e-6, 1e-5);
  check_close(q, {0.46000001f, -0.92000002f}, 1e-6, 1e-5);
}

TEST_CASE("SGD updates in place, records no graph, leaves the gradient alone", "[optim]") {
  Tensor p = Tensor::from_vector({0.5f, -1.0f, 2.0f}).requires_grad_();
  SGD optimizer({p}, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.1, .maximize = true});
  const float* storage = p.data();
  for (int k = 0; k < 3; ++k) {
    optimizer.zero_grad();
    quadratic(p, false).backward();
    const std::vector<float> grad = p.grad().to_vector();
    optimizer.step();
    CHECK(p.grad().to_vector() == grad);  // maximize and weight decay work on a copy
  }
  CHECK(p.data() == storage);
  CHECK(p.is_leaf());
  CHECK(p.requires_grad());
  CHECK(grad_enabled());  // the guard inside step() is gone
}

TEST_CASE("SGD keeps one momentum buffer per parameter, allocated once", "[optim]") {
  // PyTorch: the buffer is a copy of the first (decayed) gradient, then b = m b + (1 - d) g in place.
  Tensor p = Tensor::from_vector({1.0f, -2.0f}).requires_grad_();
  SGD optimizer({p}, {.lr = 0.1, .momentum = 0.5, .dampening = 0.2, .weight_decay = 0.1});
  CHECK_FALSE(optimizer.momentum_buffer(0).defined());
  p.set_grad(Tensor::from_vector({0.5f, 1.0f}));
  optimizer.step();
  // b = g + 0.1 p = [0.5 + 0.1, 1 - 0.2]; p = [1 - 0.06, -2 - 0.08]
  check_close(optimizer.momentum_buffer(0), {0.6f, 0.8f}, 1e-7, 0.0);
  check_close(p, {0.94f, -2.08f}, 1e-6, 0.0);
  const float* storage = optimizer.momentum_buffer(0).data();
  p.set_grad(Tensor::from_vector({-1.0f, 2.0f}));
  optimizer.step();
  // b = 0.5 [0.6, 0.8] + 0.8 ([-1, 2] + 0.1 [0.94, -2.08]) = [-0.4248, 1.8336]
  check_close(optimizer.momentum_buffer(0), {-0.4248f, 1.8336f}, 1e-6, 0.0);
  CHECK(optimizer.momentum_buffer(0).data() == storage);  // updated in place, not reallocated
  REQUIRE_THROWS_WITH(optimizer.momentum_buffer(1), Catch::Contains("index 1 is out of range for 1 parameters"));
  SGD plain({p}, {.lr = 0.1});
  plain.step();
  CHECK_FALSE(plain.momentum_buffer(0).defined());  // no momentum, no buffer
}

TEST_CASE("SGD zero_grad drops or zeroes the gradients", "[optim]") {
  Tensor p = Tensor::from_vector({1.0f, 2.0f}).requires_grad_();
  SGD optimizer({p}, {.lr = 0.1});
  sum(p * p).backward();
  optimizer.zero_grad(false);
  REQUIRE(p.grad().defined());
  check_close(p.grad(), {0.0f, 0.0f}, 0.0, 0.0);
  optimizer.zero_grad();
  CHECK_FALSE(p.grad().defined());
  optimizer.step();  // no gradients: nothing moves
  check_close(p, {1.0f, 2.0f}, 0.0, 0.0);
}

TEST_CASE("SGD refuses invalid options, naming the option and value", "[optim]") {
  Tensor p = Tensor::zeros({2}).requires_grad_();
  REQUIRE_THROWS_WITH(SGD({p}, {.lr = -0.1}), Catch::Contains("invalid learning rate: lr=-0.1"));
  REQUIRE_THROWS_WITH(SGD({p}, {.lr = 0.1, .momentum = -0.5}),
                      Catch::Contains("invalid momentum value: momentum=-0.5"));
  REQUIRE_THROWS_WITH(SGD({p}, {.lr = 0.1, .weight_decay = -1}),
                      Catch::Contains("invalid weight_decay value: weight_decay=-1"));
  REQUIRE_THROWS_WITH(SGD({p}, {.lr = 0.1, .nesterov = true}),
                      Catch::Contains("nesterov momentum requires a momentum > 0 and zero dampening") &&
                          Catch::Contains("momentum=0, dampening=0"));
  REQUIRE_THROWS_WITH(SGD({p}, {.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .nesterov = true}),
                      Catch::Contains("momentum=0.9, dampening=0.1"));
  REQUIRE_THROWS_AS(SGD({p}, {.lr = -1}), UsageError);
  REQUIRE_THROWS_WITH(SGD({}, {.lr = 0.1}), Catch::Contains("empty parameter list"));
  REQUIRE_THROWS_WITH(SGD({p, p}, {.lr = 0.1}), Catch::Contains("parameter 1 is the same tensor as parameter 0"));
  Tensor non_leaf = p * 2.0f;
  REQUIRE_THROWS_WITH(SGD({non_leaf}, {.lr = 0.1}), Catch::Contains("can't optimize a non-leaf tensor"));
  SGD optimizer({p}, {.lr = 0.1});
  REQUIRE_THROWS_WITH(optimizer.set_lr(-2), Catch::Contains("lr=-2"));
  optimizer.set_lr(0.01);
  CHECK(optimizer.options().lr == 0.01);
}

TEST_CASE("SGD matches PyTorch's fixtures step for step", "[optim]") {
  // scripts/fixtures/optim.py, sgd_cases: p0 (3, 4) and p1 (5) trained with lr 0.1 on
  // loss = sum(a p^2) + sum(b p) over both; after each of 5 steps the gradient and the value.
  struct Spec {
    const char* name;
    SGDOptions options;
  };
  const std::vector<Spec> specs = {
      {"sgd_plain", {.lr = 0.1}},
      {"sgd_momentum", {.lr = 0.1, .momentum = 0.9}},
      {"sgd_dampening", {.lr = 0.1, .momentum = 0.9, .dampening = 0.5}},
      {"sgd_weight_decay", {.lr = 0.1, .weight_decay = 0.1}},
      {"sgd_momentum_weight_decay", {.lr = 0.1, .momentum = 0.5, .dampening = 0.2, .weight_decay = 0.1}},
      {"sgd_nesterov", {.lr = 0.1, .momentum = 0.9, .nesterov = true}},
      {"sgd_maximize", {.lr = 0.1, .maximize = true}},
      {"sgd_momentum_maximize", {.lr = 0.1, .momentum = 0.9, .maximize = true}},
      {"sgd_all", {.lr = 0.1, .momentum = 0.8, .weight_decay = 0.05, .nesterov = true, .maximize = true}},
  };
  const std::vector<std::string> names = {"p0", "p1"};
  for (const Spec& spec : specs) {
    INFO(spec.name);
    minidl::testing::Fixture f(spec.name);
    std::vector<Tensor> params;
    for (const std::string& k : names) params.push_back(f[k].detach().clone().requires_grad_());
    SGD optimizer(params, spec.options);
    for (int step = 0; step < 5; ++step) {
      INFO("step " << step);
      optimizer.zero_grad();
      Tensor loss = Tensor::scalar(0.0f);
      for (size_t k = 0; k < names.size(); ++k)
        loss = loss + sum(f["a." + names[k]] * params[k] * params[k]) + sum(f["b." + names[k]] * params[k]);
      loss.backward();
      for (size_t k = 0; k < names.size(); ++k)
        check_close(params[k].grad(), f[cat("step", step, ".", names[k], ".grad")], 1e-5, 1e-5);
      optimizer.step();
      for (size_t k = 0; k < names.size(); ++k) check_close(params[k], f[cat("step", step, ".", names[k])], 1e-6, 1e-5);
    }
  }
}

TEST_CASE("SGD steps a large parameter on several threads with the bits of one thread and of a plain loop", "[sgd]") {
  // 200,000 values: above kernels::kParallelElements, so the update runs on OpenMP threads.
  const int64_t n = 200000;
  Generator gen(5);
  const Tensor start = Tensor::randn({n}, gen);
  const Tensor grad = Tensor::randn({n}, gen);
  const SGDOptions options{.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01, .nesterov = false};
  auto two_steps = [&](int threads) {
    set_num_threads(threads);
    Tensor p = start.clone().detach().requires_grad_();
    SGD optimizer({p}, options);
    for (int k = 0; k < 2; ++k) {
      p.set_grad(grad.clone());
      optimizer.step();
    }
    return p.to_vector();
  };
  const int saved_threads = get_num_threads();
  const std::vector<float> one = two_steps(1), two = two_steps(2);
  set_num_threads(saved_threads);
  // The same two steps as plain loops (PyTorch's formulas, float32 coefficients).
  std::vector<float> w = start.to_vector();
  std::vector<float> buffer(static_cast<size_t>(n), 0.0f);
  const float lr = 0.1f, momentum = 0.9f, damp = 0.9f, decay = 0.01f;
  for (int k = 0; k < 2; ++k)
    for (size_t i = 0; i < size_t(n); ++i) {
      const float d = grad.data()[i] + decay * w[i];
      buffer[i] = k == 0 ? d : momentum * buffer[i] + damp * d;
      w[i] += -lr * buffer[i];
    }
  CHECK(one == two);
  CHECK(one == w);
}

TEST_CASE("zero_grad(set_to_none) between steps: 2.x's default skips the parameter, 1.13's moves it by momentum",
          "[optim]") {
  // PyTorch: w = [1, 2], SGD lr 0.1 momentum 0.9, sum(w * w).backward(); step(); zero_grad(); step().
  // 1.13 (set_to_none=False): w = [0.62, 1.24], grad [0, 0]; 2.x (set_to_none=True): w = [0.8, 1.6], grad None.
  auto run = [](bool set_to_none, bool through_module) {
    Tensor w = Tensor::from_vector({1.0f, 2.0f}).requires_grad_();
    SGD optimizer({w}, {.lr = 0.1, .momentum = 0.9});
    sum(w * w).backward();
    optimizer.step();
    if (through_module) {
      struct Holder : nn::Module {
        explicit Holder(const Tensor& w) { register_parameter("w", w); }
        Tensor forward(const Tensor& x) override { return x; }
        std::string type_name() const override { return "Holder"; }
      } holder(w);
      holder.zero_grad(set_to_none);
    } else {
      optimizer.zero_grad(set_to_none);
    }
    optimizer.step();
    return w;
  };
  for (bool through_module : {false, true}) {
    INFO((through_module ? "Module::zero_grad" : "Optimizer::zero_grad"));
    Tensor kept = run(false, through_module);
    check_close(kept, {0.62f, 1.24f}, 1e-6, 1e-6);
    REQUIRE(kept.grad().defined());
    check_close(kept.grad(), {0.0f, 0.0f}, 0.0, 0.0);
    Tensor dropped = run(true, through_module);
    check_close(dropped, {0.8f, 1.6f}, 1e-6, 1e-6);
    CHECK_FALSE(dropped.grad().defined());
  }
}

TEST_CASE("SGD refuses a missing or negative lr, as PyTorch, and allows lr = 0", "[optim]") {
  Tensor p = Tensor::zeros({2}).requires_grad_(true);
  REQUIRE_THROWS_WITH(optim::SGD({p}, {.momentum = 0.9}),
                      "SGD: lr is required (SGDOptions{.lr = ...}), got none or NaN");
  REQUIRE_THROWS_WITH(optim::SGD({p}, {.lr = -0.1}), "SGD: invalid learning rate: lr=-0.1 (expected >= 0)");
  CHECK_NOTHROW(optim::SGD({p}, {.lr = 0.0}));
}

}  // namespace test_sgd
