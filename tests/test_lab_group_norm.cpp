// The lab's experiment 10 as a test: GroupNorm(1, C) is LayerNorm over (C, L), GroupNorm(C, C)
// is per-channel normalization.
#include <catch2/catch.hpp>

#include "experiments/experiments.hpp"

namespace test_lab_group_norm {

TEST_CASE("lab group_norm: both ends of GroupNorm", "[lab]") {
  for (uint64_t seed : {0, 1, 2}) {
    const auto m = minidl::lab::measure_group_norm_ends(seed);
    INFO("seed " << seed);
    CHECK(m.one_group_vs_layer_norm <= 1e-5);
    CHECK(m.c_groups_vs_instance_norm <= 1e-5);
  }
  const auto wide = minidl::lab::measure_group_norm_ends(7, 2, 16, 9);
  CHECK(wide.one_group_vs_layer_norm <= 1e-5);
  CHECK(wide.c_groups_vs_instance_norm <= 1e-5);
}

}  // namespace test_lab_group_norm
