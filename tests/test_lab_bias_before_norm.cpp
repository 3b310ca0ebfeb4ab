// The lab's experiment 8 as a test: a bias before BatchNorm is redundant, before LayerNorm not.
#include <catch2/catch.hpp>

#include "experiments/experiments.hpp"

namespace test_lab_bias_before_norm {

using minidl::lab::measure_bias_before_norm;
using minidl::lesson::NormKind;

TEST_CASE("lab bias_before_norm: BatchNorm removes the bias and gives it no gradient", "[lab]") {
  for (uint64_t seed : {0, 1, 2}) {
    const auto m = measure_bias_before_norm(NormKind::Batch, seed);
    INFO("seed " << seed);
    CHECK(m.output_difference <= 1e-5);
    CHECK(m.weight_gradient > 1.0);
    CHECK(m.bias_gradient <= 1e-5 * m.weight_gradient);
  }
}

TEST_CASE("lab bias_before_norm: LayerNorm keeps the bias's effect and its gradient", "[lab]") {
  for (uint64_t seed : {0, 1, 2}) {
    const auto m = measure_bias_before_norm(NormKind::Layer, seed);
    INFO("seed " << seed);
    CHECK(m.output_difference > 1e-3);
    CHECK(m.bias_gradient > 1e-3);
  }
}

TEST_CASE("lab bias_before_norm: only batch and layer are compared", "[lab]") {
  CHECK_THROWS_WITH(measure_bias_before_norm(NormKind::RMS, 0),
                    "measure_bias_before_norm compares batch and layer, got rms");
}

}  // namespace test_lab_bias_before_norm
