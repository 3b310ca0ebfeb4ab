// The lesson replayed step for step against PyTorch: the same initial weights
// (tests/fixtures/lesson/init/<run>.safetensors) and batch order, so every optimizer step's
// loss must agree. Exercises Linear, Tanh, Sequential, load_state_dict, cross_entropy and
// SGD together (and BatchNorm1d / LayerNorm for the normalized runs).
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "minidl/minidl.hpp"
#include "support/check.hpp"

using namespace minidl;

namespace {

const std::string kLesson = std::string(MINIDL_SOURCE_DIR) + "/tests/fixtures/lesson/";

// The lesson's deep_net: 8 x [Linear(n_in, 64), norm(64) or nothing, Tanh], Linear(64, 10).
std::shared_ptr<nn::Sequential> deep_net(const std::string& run) {
  auto model = std::make_shared<nn::Sequential>();
  for (int layer = 0; layer < 8; ++layer) {
    model->push_back(std::make_shared<nn::Linear>(64, 64));  // 64 pixels in, then width 64
    if (run == "batch") model->push_back(std::make_shared<nn::BatchNorm1d>(64));
    if (run == "layer") model->push_back(std::make_shared<nn::LayerNorm>(64));
    model->push_back(std::make_shared<nn::Tanh>());
  }
  model->push_back(std::make_shared<nn::Linear>(64, 10));
  return model;
}

std::vector<double> read_losses(const std::string& path) {
  std::ifstream in(path);
  std::vector<double> out;
  for (double v; in >> v;) out.push_back(v);
  return out;
}

struct Replay {
  std::vector<double> losses;  // one per optimizer step
  double train_loss, val_accuracy;
};

Replay replay(const std::string& run, size_t max_steps) {
  const data::DigitsSplit split = data::load_digits(std::string(MINIDL_SOURCE_DIR) + "/data");
  const int64_t n = split.X_train.size(0);
  auto order = data::read_batch_order(kLesson + "batch_order.txt", n, 5);
  auto model = deep_net(run);
  model->load_state_dict(io::load_safetensors(kLesson + "init/" + run + ".safetensors"));
  optim::SGD optimizer(model->parameters(), {.lr = 0.05});
  Replay out{};
  for (const auto& epoch : order) {
    model->train();
    for (size_t start = 0; start < epoch.size() && out.losses.size() < max_steps; start += 64) {
      const std::vector<int64_t> batch(epoch.begin() + long(start), epoch.begin() + long(std::min(start + 64, epoch.size())));
      optimizer.zero_grad();
      Tensor loss = nn::cross_entropy(model->forward(select_rows(split.X_train, batch)), select_rows(split.y_train, batch));
      loss.backward();
      optimizer.step();
      out.losses.push_back(loss.item());
    }
  }
  model->eval();
  NoGradGuard no_grad;
  out.train_loss = nn::cross_entropy(model->forward(split.X_train), split.y_train).item();
  Tensor predicted = argmax(model->forward(split.X_val), 1);
  int64_t right = 0;
  for (int64_t i = 0; i < split.y_val.numel(); ++i) right += predicted.data()[i] == split.y_val.data()[i];
  out.val_accuracy = double(right) / double(split.y_val.numel());
  return out;
}

double worst_difference(const std::vector<double>& a, const std::vector<double>& b, size_t count) {
  double worst = 0.0;
  for (size_t i = 0; i < count; ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

}  // namespace

TEST_CASE("The lesson's no-norm and BatchNorm runs replay PyTorch's every step loss", "[lesson][nn][optim][loss]") {
  std::ifstream results_file(kLesson + "pytorch_results.json");
  const nlohmann::json results = nlohmann::json::parse(results_file)["runs"];
  for (const std::string run : {"none", "batch"}) {
    INFO("run " << run);
    const std::vector<double> expected = read_losses(kLesson + run + "_losses.txt");
    REQUIRE(expected.size() == 115);
    const Replay got = replay(run, expected.size());
    REQUIRE(got.losses.size() == 115);
    const double worst = worst_difference(got.losses, expected, 115);
    INFO("worst step-loss difference " << worst);
    CHECK(worst < 2e-5);
    CHECK(got.train_loss == Approx(results[run]["train_loss"].get<double>()).margin(1e-4));
    CHECK(got.val_accuracy == Approx(results[run]["val_accuracy"].get<double>()).margin(1e-6));
  }
}

TEST_CASE("The lesson's LayerNorm run replays PyTorch's first steps", "[lesson][nn][optim][loss]") {
  // REFERENCE.md: this stack amplifies rounding; even PyTorch float32 against float64 agrees
  // only over the first 20 steps (to 2e-5). Here the first dozen agree to rounding (about
  // 4e-7 measured), and the drift that follows stays small through step 20 (1.5e-4).
  const std::vector<double> expected = read_losses(kLesson + "layer_losses.txt");
  const Replay got = replay("layer", 20);
  REQUIRE(got.losses.size() == 20);
  const double early = worst_difference(got.losses, expected, 12);
  const double later = worst_difference(got.losses, expected, 20);
  INFO("worst step-loss difference over 12 steps " << early << ", over 20 steps " << later);
  CHECK(early < 2e-6);
  CHECK(later < 1e-3);
}
