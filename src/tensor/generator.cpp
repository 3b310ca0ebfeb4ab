#include "minidl/tensor/generator.hpp"

#include <cmath>

namespace minidl {

// PCG32 (O'Neill, pcg-random.org): 64-bit LCG state, xorshift + rotate output.
void Generator::manual_seed(uint64_t seed) {
  state_ = 0;
  inc_ = (seed << 1u) | 1u;
  next_u32();
  state_ += 0x853c49e6748fea9bULL ^ seed;
  next_u32();
  has_spare_ = false;
}

uint32_t Generator::next_u32() {
  uint64_t old = state_;
  state_ = old * 6364136223846793005ULL + inc_;
  auto xorshifted = uint32_t(((old >> 18u) ^ old) >> 27u);
  auto rot = uint32_t(old >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((32 - rot) & 31));
}

float Generator::uniform() { return float(next_u32() >> 8) * (1.0f / 16777216.0f); }

float Generator::uniform(float low, float high) { return low + (high - low) * uniform(); }

float Generator::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // Box-Muller in double so the result does not depend on float contraction.
  double u1 = (double(next_u32()) + 1.0) / 4294967296.0;  // (0, 1]
  double u2 = double(next_u32()) / 4294967296.0;
  double radius = std::sqrt(-2.0 * std::log(u1));
  double angle = 6.283185307179586 * u2;
  spare_ = float(radius * std::sin(angle));
  has_spare_ = true;
  return float(radius * std::cos(angle));
}

uint64_t Generator::below(uint64_t n) {
  if (n <= 1) return 0;
  uint64_t span = uint64_t(1) << 32;
  if (n > span) {  // 64-bit draws for large ranges
    uint64_t limit = ~uint64_t(0) - (~uint64_t(0) % n);
    for (;;) {
      uint64_t draw = (uint64_t(next_u32()) << 32) | next_u32();
      if (draw < limit) return draw % n;
    }
  }
  uint64_t limit = span - (span % n);  // reject the biased tail
  for (;;) {
    uint64_t draw = next_u32();
    if (draw < limit) return draw % n;
  }
}

Generator& default_generator() {
  static Generator instance(0);
  return instance;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace minidl
