// The lab's experiment 9 as a test: RMSNorm passes a constant offset through, LayerNorm
// removes it; the lesson's worked numbers.
#include <catch2/catch.hpp>
#include <cmath>

#include "experiments/experiments.hpp"

namespace test_lab_rms_offset {

using minidl::lab::measure_offset;

TEST_CASE("lab rms_offset: LayerNorm centers the output, RMSNorm keeps the offset scaled", "[lab]") {
  for (double offset : {0.0, 1.0, 10.0, 100.0}) {
    const auto m = measure_offset(offset, 3);
    INFO("offset " << offset);
    CHECK(std::fabs(m.layer_norm_mean) <= 1e-4);
    // x = z + c with z standard normal: rms about sqrt(1 + c^2), so the mean about c / sqrt(1 + c^2).
    CHECK(m.rms_norm_mean == Approx(offset / std::sqrt(1.0 + offset * offset)).margin(0.05));
  }
}

TEST_CASE("lab rms_offset: the lesson's worked examples", "[lab]") {
  const auto examples = minidl::lab::worked_examples();
  REQUIRE(examples.size() == 8);
  for (const auto& w : examples) {
    INFO(w.name);
    REQUIRE(w.computed.size() == w.expected.size());
    for (size_t i = 0; i < w.expected.size(); ++i) CHECK(w.computed[i] == Approx(w.expected[i]).margin(w.tolerance));
  }
}

}  // namespace test_lab_rms_offset
