// The training knobs the lab added to the lesson's network and loop.
#include <catch2/catch.hpp>

#include "minidl/nn/linear.hpp"
#include "minidl/nn/norm/batch_norm.hpp"
#include "minidl/tensor/error.hpp"
#include "models/deep_net.hpp"
#include "support/datasets.hpp"
#include "training/digits_train.hpp"

namespace test_lab_training_options {

using minidl::testing::digits_split;

using namespace minidl;
using lesson::NormKind;

TEST_CASE("deep_net init_scale multiplies every Linear's weight and leaves biases", "[lab][lesson]") {
  Generator a(5), b(5);
  auto plain = lesson::deep_net(NormKind::Layer, {.depth = 2}, a);
  auto scaled = lesson::deep_net(NormKind::Layer, {.depth = 2, .init_scale = 0.25}, b);
  for (size_t i : {0u, 3u, 6u}) {
    const auto& p = plain->at<nn::Linear>(i);
    const auto& s = scaled->at<nn::Linear>(i);
    for (int64_t k = 0; k < p.weight.numel(); ++k) CHECK(s.weight.data()[k] == p.weight.data()[k] * 0.25f);
    for (int64_t k = 0; k < p.bias.numel(); ++k) CHECK(s.bias.data()[k] == p.bias.data()[k]);
  }
}

TEST_CASE("deep_net bias_before_norm = false drops the bias of the Linears before a norm", "[lab][lesson]") {
  auto model = lesson::deep_net(NormKind::Batch, {.depth = 2, .bias_before_norm = false});
  CHECK_FALSE(model->at<nn::Linear>(0).bias.defined());
  CHECK_FALSE(model->at<nn::Linear>(3).bias.defined());
  CHECK(model->at<nn::Linear>(6).bias.defined());  // the final Linear feeds no norm
  auto none = lesson::deep_net(NormKind::None, {.depth = 2, .bias_before_norm = false});
  CHECK(none->at<nn::Linear>(0).bias.defined());  // nothing to remove it
}

TEST_CASE("deep_net bn_momentum reaches BatchNorm1d, None included", "[lab][lesson]") {
  auto cumulative = lesson::deep_net(NormKind::Batch, {.depth = 1, .bn_momentum = std::nullopt});
  CHECK_FALSE(cumulative->at<nn::BatchNorm1d>(1).options().momentum.has_value());
  auto slow = lesson::deep_net(NormKind::Batch, {.depth = 1, .bn_momentum = 0.01});
  CHECK(*slow->at<nn::BatchNorm1d>(1).options().momentum == 0.01);
}

TEST_CASE("train_run with steps trains exactly that many steps across epochs", "[lab][lesson]") {
  lesson::TrainOptions o;
  o.norm = NormKind::Layer;
  o.net.depth = 1;
  o.batch_size = 500;  // 3 batches per epoch (500, 500, 437)
  o.steps = 7;
  const lesson::RunResult r = lesson::train_run(digits_split(), o);
  REQUIRE(r.ok());
  REQUIRE(r.curve.size() == 7);
  CHECK(r.curve.back().epoch == 3);  // 3 + 3 + 1
  CHECK(r.validation.size() == 3);
}

}  // namespace test_lab_training_options
