#pragma once
#include <cstdint>

namespace minidl {

/// A seedable random stream that gives the same numbers on every machine and compiler:
/// its own PCG32 core and its own float/normal/integer transforms (std::*_distribution
/// differ between standard libraries, so none is used).
class Generator {
 public:
  explicit Generator(uint64_t seed = 0) { manual_seed(seed); }
  void manual_seed(uint64_t seed);

  uint32_t next_u32();
  /// Uniform in [0, 1) with 24 random bits.
  float uniform();
  /// Uniform in [low, high).
  float uniform(float low, float high);
  /// Standard normal (Box-Muller).
  float normal();
  /// Uniform integer in [0, n), unbiased (rejection).
  uint64_t below(uint64_t n);

 private:
  uint64_t state_ = 0;
  uint64_t inc_ = 0;
  bool has_spare_ = false;
  float spare_ = 0.0f;
};

/// The process-wide generator used when none is passed (like torch.manual_seed).
Generator& default_generator();
void manual_seed(uint64_t seed);

}  // namespace minidl
