// The lesson step for step against PyTorch 1.13, through the library's lesson runner (what
// `digits --init --batch-order` runs): minidl trains each of the lesson's three runs from
// PyTorch's initial weights in PyTorch's batch order (tests/fixtures/lesson/, written by
// scripts/make_fixtures.py) and must reach PyTorch's loss at every optimizer step.
//
// How close is possible: PyTorch itself, float32 against float64, keeps the no-norm and
// BatchNorm runs within 4e-7 on all 115 steps, so those two must agree within 1e-4 on every
// step, and their final figures too. The deep tanh + LayerNorm stack amplifies rounding
// from step 15 on: flipping the last bit of some initial weights (a relative change of
// 1e-8) moves PyTorch's own step-20 loss by 4e-5 to 2.3e-4 (make_fixtures.py --sensitivity),
// so a float32 implementation that rounds differently holds 1e-4 there only with a margin
// of about 4 to 5 (measured here: 3e-6 over 14 steps, 2e-5 over 20). The bar is 1e-4 over
// the first 20 steps, and that is what the LayerNorm run is held to.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "data/batch_order.hpp"
#include "data/digits.hpp"
#include "minidl/io/safetensors.hpp"
#include "lesson/train_run.hpp"

using namespace minidl;

namespace {

const std::string kLessonDir = std::string(MINIDL_SOURCE_DIR) + "/tests/fixtures/lesson/";

std::vector<double> read_losses(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<double> losses;
  for (double loss; in >> loss;) losses.push_back(loss);
  return losses;
}

struct Bound {
  size_t steps;      // the first `steps` step losses
  double tolerance;  // agree within this, absolute
};

/// Trains the run from PyTorch's weights in PyTorch's order, checks the step losses within
/// each bound and reports the final figures beside PyTorch's; with check_final, the final
/// training loss within 1e-4 and the same val accuracy.
void check_run_against_pytorch(const std::string& run, const std::vector<Bound>& bounds, bool check_final) {
  static const data::DigitsSplit data = data::load_digits(std::string(MINIDL_SOURCE_DIR) + "/data");
  lesson::TrainOptions options;
  options.norm = lesson::parse_norm(run);
  options.init = io::load_safetensors(kLessonDir + "init/" + run + ".safetensors");
  options.batch_order = data::read_batch_order(kLessonDir + "batch_order.txt", data.X_train.size(0), options.epochs);
  const lesson::RunResult result = lesson::train_run(data, options);
  REQUIRE(result.ok());

  const std::vector<double> expected = read_losses(kLessonDir + run + "_losses.txt");
  REQUIRE(expected.size() == 115);
  REQUIRE(result.curve.size() == expected.size());

  std::vector<double> diffs;
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("step " << i + 1 << " loss " << result.curve[i].loss);
    REQUIRE(std::isfinite(result.curve[i].loss));
    diffs.push_back(std::abs(double(result.curve[i].loss) - expected[i]));
  }
  const auto worst_of = [&](size_t steps) { return *std::max_element(diffs.begin(), diffs.begin() + long(steps)); };

  std::ifstream results_file(kLessonDir + "pytorch_results.json");
  const nlohmann::json pytorch = nlohmann::json::parse(results_file).at("runs").at(run);
  const double pytorch_loss = pytorch.at("train_loss"), pytorch_accuracy = pytorch.at("val_accuracy");
  std::ostringstream report;
  report << lesson::display_name(options.norm) << ": step losses, max |minidl - PyTorch|";
  for (const Bound& bound : bounds) report << " " << worst_of(bound.steps) << " over the first " << bound.steps << ",";
  report << " " << worst_of(diffs.size()) << " over all " << diffs.size() << "\n  minidl  training loss "
         << result.train_loss << "   val accuracy " << result.val_accuracy << "\n  PyTorch training loss "
         << pytorch_loss << "   val accuracy " << pytorch_accuracy;
  WARN(report.str());
  for (const Bound& bound : bounds) {
    INFO("the first " << bound.steps << " steps within " << bound.tolerance);
    CHECK(worst_of(bound.steps) <= bound.tolerance);
  }
  if (check_final) {
    CHECK(result.train_loss == Approx(pytorch_loss).margin(1e-4));
    CHECK(result.val_accuracy == Approx(pytorch_accuracy).margin(1e-6));
  }
}

}  // namespace

TEST_CASE("lesson vs PyTorch: no normalization, every step's loss within 1e-4", "[lesson][pytorch]") {
  check_run_against_pytorch("none", {{115, 1e-4}}, true);
}

TEST_CASE("lesson vs PyTorch: BatchNorm1d, every step's loss within 1e-4", "[lesson][pytorch]") {
  check_run_against_pytorch("batch", {{115, 1e-4}}, true);
}

TEST_CASE("lesson vs PyTorch: LayerNorm, the first 20 steps within 1e-4", "[lesson][pytorch]") {
  check_run_against_pytorch("layer", {{14, 1e-5}, {20, 1e-4}}, false);
}
