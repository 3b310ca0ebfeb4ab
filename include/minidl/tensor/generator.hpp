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

  /// The stream's position (torch.Generator's get_state / set_state): a generator given
  /// another's state draws what that one would draw next, so a resumed run continues.
  struct State {
    uint64_t state = 0, inc = 0;
    bool has_spare = false;  // normal() draws two values at a time and keeps one
    float spare = 0.0f;
  };
  State get_state() const { return {state_, inc_, has_spare_, spare_}; }
  void set_state(const State& s) {
    state_ = s.state;
    inc_ = s.inc;
    has_spare_ = s.has_spare;
    spare_ = s.spare;
  }

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
