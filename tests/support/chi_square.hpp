#pragma once
// Pearson's chi-square statistic, for tests of a sampler's distribution: how far its counts
// lie from the probabilities it should draw with.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace minidl::testing {

/// sum (observed - expected)^2 / expected over the cells of positive probability. For k such
/// cells and a correct sampler it follows a chi-square law with k - 1 degrees of freedom,
/// whatever the seed (closely, for expected counts of some tens and more).
inline double chi_square(const std::vector<int64_t>& counts, const std::vector<double>& probs, int64_t draws) {
  double statistic = 0.0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (probs[i] == 0.0) continue;
    const double expected = probs[i] * double(draws);
    statistic += (double(counts[i]) - expected) * (double(counts[i]) - expected) / expected;
  }
  return statistic;
}

}  // namespace minidl::testing
