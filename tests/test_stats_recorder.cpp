// StatsRecorder and describe() against figures worked out by hand on a Linear(2, 2) + Tanh.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "minidl/minidl.hpp"

namespace test_stats_recorder {

using namespace minidl;
using diagnostics::StatsRecorder;
using diagnostics::StatsRow;

namespace {

double sample_std(const std::vector<double>& v) {
  double mean = 0.0, squares = 0.0;
  for (double x : v) mean += x / double(v.size());
  for (double x : v) squares += (x - mean) * (x - mean);
  return std::sqrt(squares / double(v.size() - 1));
}

// (layer, quantity, statistic) -> value, for the rows of one step.
std::map<std::string, double> by_key(const std::vector<StatsRow>& rows, int64_t step) {
  std::map<std::string, double> out;
  for (const StatsRow& r : rows)
    if (r.step == step) out[cat(r.layer, " ", r.quantity, " ", diagnostics::statistic_name(r))] = r.value;
  return out;
}

}  // namespace

TEST_CASE("describe: mean, std, saturated share and a density histogram", "[diagnostics]") {
  const Tensor t = Tensor::from_vector({-0.99f, -0.5f, 0.0f, 0.5f, 0.98f, 1.0f});
  const diagnostics::TensorStats s = diagnostics::describe(t, 0.97f, {.bins = 4, .range = 1.0f});
  const double mean = (-0.99 - 0.5 + 0.0 + 0.5 + 0.98 + 1.0) / 6.0;
  CHECK(s.mean == Approx(mean).epsilon(1e-6));
  CHECK(s.std == Approx(sample_std({-0.99, -0.5, 0.0, 0.5, 0.98, 1.0})).epsilon(1e-6));
  CHECK(s.saturated == Approx(3.0 / 6.0));
  // bins of width 0.5 over [-1, 1]: {-0.99}, {-0.5}, {0}, {0.5, 0.98, 1.0 (the top edge)}
  REQUIRE(s.histogram.density.size() == 4);
  const double unit = 1.0 / (6.0 * 0.5);
  CHECK(s.histogram.density == std::vector<double>{unit, unit, unit, 3 * unit});
  // Without a range: the values' own min..max; equal values get a bin around them.
  const diagnostics::Histogram own = diagnostics::histogram(Tensor::full({3}, 2.0f), {.bins = 2});
  CHECK(own.low == 1.5);
  CHECK(own.high == 2.5);
  CHECK(own.density == std::vector<double>{0.0, 3.0 / 3.0 / 0.5});
  CHECK_THROWS_WITH(diagnostics::describe(Tensor::zeros({0})),
                    "describe: expected a tensor with at least one element, got shape [0]");
  CHECK_THROWS_WITH(diagnostics::histogram(t, {.bins = 0}), "histogram: expected at least 1 bin, got 0");
}

// The model's step by hand: out = tanh(x W^T + b), loss = sum(out * c), so dL/d out = c.
struct HandStep {
  std::vector<double> out, grad_w, grad_b;
};
HandStep by_hand(const std::vector<double>& w, const std::vector<double>& b) {
  const double x[4] = {1.0, 2.0, 3.0, -1.0}, c[4] = {1.0, 2.0, 3.0, 4.0};  // (2, 2) each
  HandStep h{std::vector<double>(4), std::vector<double>(4), std::vector<double>(2)};
  for (int n = 0; n < 2; ++n)
    for (int j = 0; j < 2; ++j) {
      const double y = std::tanh(w[j * 2] * x[n * 2] + w[j * 2 + 1] * x[n * 2 + 1] + b[j]);
      const double dz = c[n * 2 + j] * (1.0 - y * y);
      h.out[n * 2 + j] = y;
      h.grad_b[j] += dz;
      for (int i = 0; i < 2; ++i) h.grad_w[j * 2 + i] += dz * x[n * 2 + i];
    }
  return h;
}

TEST_CASE("StatsRecorder's figures on a small model equal a hand computation", "[diagnostics]") {
  nn::Sequential model(nn::Linear(2, 2), nn::Tanh());
  nn::Linear& linear = model.at<nn::Linear>(0);
  std::vector<double> w{0.5, -1.0, 1.0, 0.25}, b{0.0, 0.1};
  {
    NoGradGuard no_grad;
    linear.weight.copy_(Tensor::from_vector({0.5f, -1.0f, 1.0f, 0.25f}, {2, 2}));
    linear.bias.copy_(Tensor::from_vector({0.0f, 0.1f}));
  }
  const float lr = 0.1f;
  optim::SGD sgd(model.parameters(), {.lr = lr});
  StatsRecorder stats({.saturation = 0.97f, .bins = 4, .output_range = 1.0f, .grad_range = 0.0f});
  stats.watch_output("tanh", *model[1]);
  stats.watch_parameter("linear.weight", linear.weight);
  auto step = [&](int64_t n, bool record) {
    if (record) stats.arm(n);
    sgd.zero_grad();
    const Tensor out = model(Tensor::from_vector({1.0f, 2.0f, 3.0f, -1.0f}, {2, 2}));
    (out * Tensor::from_vector({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2})).sum().backward();
    stats.before_update();
    sgd.step();
    stats.after_update();
  };

  step(1, false);
  CHECK(stats.rows().empty());  // an unarmed step records nothing
  const HandStep first = by_hand(w, b);
  for (int i = 0; i < 4; ++i) w[i] -= lr * first.grad_w[i];
  for (int j = 0; j < 2; ++j) b[j] -= lr * first.grad_b[j];
  for (int i = 0; i < 4; ++i) REQUIRE(linear.weight.data()[i] == Approx(w[i]).epsilon(1e-5));

  step(2, true);
  const HandStep h = by_hand(w, b);
  const std::map<std::string, double> got = by_key(stats.rows(), 2);
  double mean = 0.0;
  int saturated = 0;
  std::vector<double> counts(4, 0.0);  // over [-1, 1] in bins of 0.5
  for (double y : h.out) {
    mean += y / 4.0;
    saturated += std::abs(y) > 0.97;
    counts[size_t(std::min(3.0, std::floor((y + 1.0) / 0.5)))] += 1.0;
  }
  CHECK(got.at("tanh output mean") == Approx(mean).epsilon(1e-5));
  CHECK(got.at("tanh output std") == Approx(sample_std(h.out)).epsilon(1e-5));
  CHECK(got.at("tanh output saturated") == Approx(saturated / 4.0));
  CHECK(saturated == 2);  // the case exercises both sides of the threshold
  CHECK(got.at("tanh output bin:-1:-0.5") == Approx(counts[0] / (4 * 0.5)));
  CHECK(got.at("tanh output bin:-0.5:0") == Approx(counts[1] / (4 * 0.5)));
  CHECK(got.at("tanh output bin:0:0.5") == Approx(counts[2] / (4 * 0.5)));
  CHECK(got.at("tanh output bin:0.5:1") == Approx(counts[3] / (4 * 0.5)));
  // The output's gradient is c = 1, 2, 3, 4: its own range [1, 4] in bins of 0.75.
  CHECK(got.at("tanh output_grad mean") == Approx(2.5));
  CHECK(got.at("tanh output_grad std") == Approx(sample_std({1.0, 2.0, 3.0, 4.0})));
  CHECK(got.count("tanh output_grad saturated") == 0);
  CHECK(got.at("tanh output_grad bin:1:1.75") == Approx(1.0 / (4 * 0.75)));
  CHECK(got.at("tanh output_grad bin:3.25:4") == Approx(1.0 / (4 * 0.75)));  // 4, the top edge, is in
  // The weight: its gradient, and SGD's update (-lr grad) against the weight before the step.
  const double data_std = sample_std(w), grad_std = sample_std(h.grad_w);
  CHECK(got.at("linear.weight parameter data_std") == Approx(data_std).epsilon(1e-5));
  CHECK(got.at("linear.weight parameter grad_std") == Approx(grad_std).epsilon(1e-5));
  CHECK(got.at("linear.weight parameter grad_to_data") == Approx(grad_std / data_std).epsilon(1e-5));
  CHECK(got.at("linear.weight parameter update_std") == Approx(lr * grad_std).epsilon(1e-4));
  CHECK(got.at("linear.weight parameter update_to_data") == Approx(lr * grad_std / data_std).epsilon(1e-4));
  CHECK_FALSE(stats.armed());  // after_update ends the step's record
  const size_t rows = stats.rows().size();
  step(3, false);
  CHECK(stats.rows().size() == rows);
}

TEST_CASE("StatsRecorder refuses bad options and removes its hooks when it goes", "[diagnostics]") {
  CHECK_THROWS_WITH(StatsRecorder({.bins = 0}), "StatsRecorder: bins must be at least 1, got 0");
  CHECK_THROWS_WITH(StatsRecorder({.output_range = -1.0f}),
                    "StatsRecorder: a histogram range must be >= 0 (0: the values' min..max), got -1 and 0");
  nn::Tanh tanh;
  {
    StatsRecorder stats;
    stats.watch_output("t", tanh);
    stats.arm(1);
    tanh(Tensor::ones({2}));
    CHECK_FALSE(stats.rows().empty());
  }
  tanh(Tensor::ones({2}));  // the recorder is gone: its hook must be too (ASan would see a use after free)
}

TEST_CASE("StatsRecorder's hooks are on the layers only while a step is armed", "[diagnostics]") {
  Generator gen(2);
  nn::Sequential model(nn::Linear(3, 4, gen), nn::Tanh());
  StatsRecorder stats;
  stats.watch_output("tanh", *model[1]);
  stats.watch_parameters(model);
  const Tensor x = Tensor::randn({5, 3}, gen);
  auto hooked = [&] { return model[0]->has_hooks() || model[1]->has_hooks(); };
  CHECK_FALSE(hooked());  // watching registers nothing
  stats.arm(1);
  CHECK(model[1]->has_hooks());
  stats.arm(1);  // arming again adds no second hook
  const Tensor out = model(x);
  CHECK(out.grad_fn()->name == "Tanh");  // the hook sees Tanh's own output
  out.sum().backward();
  stats.before_update();
  stats.after_update();
  CHECK_FALSE(hooked());  // the step's end takes the hooks off
  size_t outputs = 0;
  for (const StatsRow& r : stats.rows()) outputs += r.quantity == "output" && r.statistic == "mean";
  CHECK(outputs == 1);
  stats.arm(2);
  stats.disarm();
  CHECK_FALSE(hooked());
  model(x);
  CHECK(stats.rows().size() > 0);
  for (const StatsRow& r : stats.rows()) CHECK(r.step == 1);  // a disarmed step records nothing
}

TEST_CASE("StatsRecorder's rows are plain values, and a log keeps their names past the recorder", "[diagnostics]") {
  static_assert(std::is_trivially_copyable_v<StatsRow>);
  diagnostics::StatsLog log;
  {
    nn::Tanh tanh;
    StatsRecorder stats({.bins = 2, .output_range = 1.0f});
    stats.watch_output(std::string("a layer with a name too long for a short string"), tanh);
    stats.arm(7);
    tanh(Tensor::from_vector({-0.5f, 0.25f, 1.0f}));
    stats.disarm();
    CHECK(stats.log().rows.size() == 5);
    log = stats.take_log();
    CHECK(stats.rows().empty());
  }
  std::vector<std::string> names;
  for (const StatsRow& r : log.rows) {
    CHECK(r.step == 7);
    CHECK(r.layer == "a layer with a name too long for a short string");
    names.push_back(diagnostics::statistic_name(r));
  }
  CHECK(names == std::vector<std::string>{"mean", "std", "saturated", "bin:-1:0", "bin:0:1"});
  REQUIRE(log.rows.size() == 5);
  CHECK(log.rows[3].statistic == "bin");
  CHECK(log.rows[4].low == 0.0);
  CHECK(log.rows[4].high == 1.0);
  CHECK(log.rows[4].value == Approx(2.0 / 3.0));  // 0.25 and 1.0 (the top edge) in a bin of width 1
}

}  // namespace test_stats_recorder
