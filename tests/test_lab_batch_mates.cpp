// The lab's experiment 7 as a test: batch mates leak into BatchNorm's training-mode output,
// not into LayerNorm's, RMSNorm's or GroupNorm's.
#include <catch2/catch.hpp>

#include "experiments/experiments.hpp"
#include "support/datasets.hpp"

namespace test_lab_batch_mates {

using minidl::testing::digits_split;

using minidl::lab::measure_batch_mates;
using minidl::lesson::NormKind;

TEST_CASE("lab batch_mates: BatchNorm's training output moves with the batch mates", "[lab]") {
  for (uint64_t seed : {0, 1}) {
    const auto m = measure_batch_mates(digits_split(), NormKind::Batch, seed, 4);
    INFO("seed " << seed);
    CHECK(m.spread_over_mates > 1e-2);
    CHECK(m.train_vs_eval > 1e-2);
    CHECK_FALSE(m.bitwise);
  }
}

TEST_CASE("lab batch_mates: per-example norms give the same output in any batch and mode", "[lab]") {
  // Rounding only: OpenBLAS may pick another kernel for another batch size, so the batch-size
  // comparison is held to float rounding of outputs near 1, not to equal bits.
  for (NormKind norm : {NormKind::Layer, NormKind::RMS, NormKind::Group})
    for (uint64_t seed : {0, 1}) {
      const auto m = measure_batch_mates(digits_split(), norm, seed, 4);
      INFO(minidl::lesson::short_name(norm) << " seed " << seed);
      CHECK(m.spread_over_mates <= 1e-5);
      CHECK(m.train_vs_eval <= 1e-5);
      CHECK(m.across_sizes <= 1e-5);
    }
}

}  // namespace test_lab_batch_mates
