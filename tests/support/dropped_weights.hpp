#pragma once
// Attention weights after dropout, as PyTorch drops them (F.dropout on the softmax's output):
// each weight zeroed, or scaled by 1 / (1 - p), with no renormalization of the survivors.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "minidl/minidl.hpp"

namespace minidl::testing {

inline constexpr double kUnitRoundoff = 0x1p-24;  // float32's

/// How far a surviving weight may be from plain / (1 - p), relative: the rounding of the scale
/// 1 / (1 - p) and of the product (2u + u^2), or of one division, covers either way of scaling.
inline constexpr double kSurvivorRtol = 3 * kUnitRoundoff;

/// The number of weights `dropped` zeroed; fails at the first that is neither 0 nor its
/// undropped value in `plain` divided by 1 - p (a renormalized row would divide by the row's
/// surviving sum instead).
inline int64_t count_dropped(const Tensor& dropped, const Tensor& plain, double p) {
  REQUIRE(dropped.shape() == plain.shape());
  int64_t zeros = 0;
  for (int64_t i = 0; i < plain.numel(); ++i) {
    const double survivor = plain.data()[i] / (1.0 - p), got = dropped.data()[i];
    if (got == 0.0) {
      ++zeros;
    } else if (std::abs(got - survivor) > kSurvivorRtol * survivor) {
      FAIL("weight " << i << " is " << got << ": neither 0 nor " << survivor << " (" << plain.data()[i]
                     << " / (1 - p), p = " << p << ")");
    }
  }
  return zeros;
}

}  // namespace minidl::testing
