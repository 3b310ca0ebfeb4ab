// The learning-rate schedules against PyTorch 1.13's lr sequences over 300 steps, their
// state_dict and their errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "minidl/minidl.hpp"
#include "support/fixture.hpp"

namespace test_lr_scheduler {

using namespace minidl;
using namespace minidl::optim;

namespace {

using Make = std::function<std::unique_ptr<LRScheduler>(Optimizer&)>;

// The constructions of scripts/fixtures/optim.py's schedule_cases, by case name.
const std::map<std::string, Make>& constructions() {
  static const std::map<std::string, Make> table = {
      {"linear_default", [](Optimizer& o) { return std::make_unique<LinearLR>(o); }},
      {"linear_warmup",
       [](Optimizer& o) {
         return std::make_unique<LinearLR>(o, LinearLROptions{.start_factor = 0.01, .total_iters = 50});
       }},
      {"linear_decay",
       [](Optimizer& o) {
         return std::make_unique<LinearLR>(o,
                                           LinearLROptions{.start_factor = 1.0, .end_factor = 0.1, .total_iters = 200});
       }},
      {"cosine",
       [](Optimizer& o) { return std::make_unique<CosineAnnealingLR>(o, CosineAnnealingLROptions{.T_max = 300}); }},
      {"cosine_cycles",
       [](Optimizer& o) {
         return std::make_unique<CosineAnnealingLR>(o, CosineAnnealingLROptions{.T_max = 70, .eta_min = 0.002});
       }},
      {"step", [](Optimizer& o) { return std::make_unique<StepLR>(o, StepLROptions{.step_size = 30}); }},
      {"step_gamma",
       [](Optimizer& o) { return std::make_unique<StepLR>(o, StepLROptions{.step_size = 45, .gamma = 0.5}); }},
      {"lambda",
       [](Optimizer& o) {
         return std::make_unique<LambdaLR>(o, [](int64_t e) { return 1.0 / (1.0 + 0.05 * double(e)); });
       }},
      {"sequential_warmup_cosine",
       [](Optimizer& o) {
         auto warmup = std::make_shared<LinearLR>(o, LinearLROptions{.start_factor = 0.1, .total_iters = 20});
         auto cosine = std::make_shared<CosineAnnealingLR>(o, CosineAnnealingLROptions{.T_max = 280});
         return std::make_unique<SequentialLR>(o, std::vector<std::shared_ptr<LRScheduler>>{warmup, cosine},
                                               std::vector<int64_t>{20});
       }},
      {"sequential_warmup_step",
       [](Optimizer& o) {
         auto warmup = std::make_shared<LinearLR>(o, LinearLROptions{.start_factor = 0.25, .total_iters = 10});
         auto steps = std::make_shared<StepLR>(o, StepLROptions{.step_size = 50, .gamma = 0.3});
         return std::make_unique<SequentialLR>(o, std::vector<std::shared_ptr<LRScheduler>>{warmup, steps},
                                               std::vector<int64_t>{10});
       }},
      {"sequential_three",
       [](Optimizer& o) {
         auto warmup = std::make_shared<LinearLR>(o, LinearLROptions{.start_factor = 0.5, .total_iters = 40});
         auto decay = std::make_shared<LambdaLR>(o, [](int64_t e) { return std::pow(0.99, double(e)); });
         auto cosine = std::make_shared<CosineAnnealingLR>(o, CosineAnnealingLROptions{.T_max = 100, .eta_min = 0.01});
         return std::make_unique<SequentialLR>(o, std::vector<std::shared_ptr<LRScheduler>>{warmup, decay, cosine},
                                               std::vector<int64_t>{30, 150});
       }},
  };
  return table;
}

nlohmann::json schedule_fixtures() {
  std::ifstream in(minidl::testing::fixtures_dir() + "/lr_schedules.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// Relative 1e-12: the same float64 formulas; only libm's cos and pow may round apart.
void check_lr(double actual, double expected) {
  INFO(actual << " against " << expected);
  CHECK(std::fabs(actual - expected) <= 1e-12 * std::fabs(expected) + 1e-300);
}

}  // namespace

TEST_CASE("Each schedule gives PyTorch's lr sequence over 300 steps", "[optim][schedule]") {
  const nlohmann::json cases = schedule_fixtures();
  CHECK(cases.size() == constructions().size());
  for (const nlohmann::json& c : cases) {
    const std::string name = c["case"];
    INFO(name);
    REQUIRE(constructions().count(name));
    Tensor p = Tensor::zeros({1}).requires_grad_();
    SGD optimizer({p}, {.lr = c["lr"].get<double>()});
    std::unique_ptr<LRScheduler> schedule = constructions().at(name)(optimizer);
    const std::vector<double> lrs = c["lrs"];
    for (size_t k = 0; k < lrs.size(); ++k) {
      INFO("epoch " << k);
      if (k > 0) {
        optimizer.step();
        schedule->step();
      }
      check_lr(schedule->get_last_lr(), lrs[k]);
      check_lr(optimizer.lr(), lrs[k]);
    }
  }
}

TEST_CASE("A schedule resumed from its state_dict continues PyTorch's sequence", "[optim][schedule]") {
  for (const nlohmann::json& c : schedule_fixtures()) {
    const std::string name = c["case"];
    INFO(name);
    const std::vector<double> lrs = c["lrs"];
    Tensor p = Tensor::zeros({1}).requires_grad_();
    SGD first({p}, {.lr = c["lr"].get<double>()});
    auto schedule = constructions().at(name)(first);
    for (int k = 0; k < 137; ++k) schedule->step();
    const SchedulerState saved = schedule->state_dict();
    const OptimizerState optimizer_saved = first.state_dict();
    // A fresh optimizer and schedule, as a resumed program builds them, then both states.
    SGD second({p}, {.lr = c["lr"].get<double>()});
    auto resumed = constructions().at(name)(second);
    second.load_state_dict(optimizer_saved);
    resumed->load_state_dict(saved);
    CHECK(resumed->last_epoch() == 137);
    for (size_t k = 138; k < lrs.size(); ++k) {
      resumed->step();
      check_lr(second.lr(), lrs[k]);
    }
  }
}

TEST_CASE("Schedules set initial_lr once, as PyTorch's setdefault, and it travels in the optimizer's state",
          "[optim][schedule]") {
  Tensor p = Tensor::zeros({1}).requires_grad_();
  Adam optimizer({p}, {.lr = 0.5});
  CHECK_FALSE(optimizer.initial_lr().has_value());
  LinearLR warmup(optimizer, {.start_factor = 0.1, .total_iters = 4});
  CHECK(optimizer.lr() == 0.5 * 0.1);
  CosineAnnealingLR cosine(optimizer, {.T_max = 10});
  CHECK(cosine.base_lr() == 0.5);  // the initial lr, not the warmed-down one
  CHECK(std::get<double>(optimizer.state_dict().param_group.at("initial_lr")) == 0.5);
}

TEST_CASE("Schedules refuse options out of range, naming them", "[optim][schedule]") {
  Tensor p = Tensor::zeros({1}).requires_grad_();
  SGD optimizer({p}, {.lr = 0.1});
  REQUIRE_THROWS_WITH(LinearLR(optimizer, {.start_factor = 0.0}),
                      Catch::Contains("start_factor=0 (expected in (0, 1])"));
  REQUIRE_THROWS_WITH(LinearLR(optimizer, {.end_factor = 1.5}), Catch::Contains("end_factor=1.5"));
  REQUIRE_THROWS_WITH(LinearLR(optimizer, {.total_iters = 0}), Catch::Contains("total_iters=0 (expected >= 1)"));
  REQUIRE_THROWS_WITH(CosineAnnealingLR(optimizer, {}), Catch::Contains("T_max=0 (expected >= 1)"));
  REQUIRE_THROWS_WITH(CosineAnnealingLR(optimizer, {.T_max = 5, .eta_min = -1}), Catch::Contains("eta_min=-1"));
  REQUIRE_THROWS_WITH(StepLR(optimizer, {}), Catch::Contains("step_size=0 (expected >= 1)"));
  REQUIRE_THROWS_WITH(StepLR(optimizer, {.step_size = 3, .gamma = -0.5}), Catch::Contains("gamma=-0.5"));
  REQUIRE_THROWS_WITH(LambdaLR(optimizer, nullptr), Catch::Contains("lr_lambda is empty"));
  auto a = std::make_shared<StepLR>(optimizer, StepLROptions{.step_size = 3});
  auto b = std::make_shared<StepLR>(optimizer, StepLROptions{.step_size = 3});
  REQUIRE_THROWS_WITH(SequentialLR(optimizer, {a, b}, {}), Catch::Contains("got 2 schedules and 0 milestones"));
  SGD other({p}, {.lr = 0.1});
  auto c = std::make_shared<StepLR>(other, StepLROptions{.step_size = 3});
  REQUIRE_THROWS_WITH(SequentialLR(optimizer, {a, c}, {4}),
                      Catch::Contains("schedule 1 is built on another optimizer"));
  REQUIRE_THROWS_WITH(SequentialLR(optimizer, {}, {}), Catch::Contains("at least one schedule"));
}

}  // namespace test_lr_scheduler
