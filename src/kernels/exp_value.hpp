#pragma once
// e^x in double for x <= 0: the exponentials of a softmax, shifted by the row's maximum.
// Inline and written with IEEE operations only (+ - *, fused multiply-adds written out,
// selects, bit operations), so a loop over it vectorizes, where a call to libm's exp per
// value does not, and every build and CPU gives every value the same bits.
//
// x = n ln 2 + r with n = round(x / ln 2) and |r| <= ln 2 / 2 (ln 2 in two parts, Cody and
// Waite, so n ln 2 is exact); e^r is its Taylor polynomial to r^13 / 13! (the next term is
// under 5e-18, a twentieth of an ulp); 2^n is applied as two powers of two, so results down
// to the subnormals round once. x below -745.2 (e^x under half the least subnormal), and
// -inf, give 0; NaN stays NaN. Within 1 ulp of the exact e^x (tests/test_exp_kernel.cpp).
#include <bit>
#include <cstdint>

namespace minidl::kernels {

inline double exp_nonpositive(double x) {
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2High = 6.93147180369123816490e-01;  // 0x3fe62e42fee00000: n * it is exact
  constexpr double kLn2Low = 1.90821492927058770002e-10;
  constexpr double kShifter = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
  const double clamped = x < -745.2 ? -745.2 : x;  // NaN compares false and passes through
  const double shifted = __builtin_fma(clamped, kLog2e, kShifter);
  const double n = shifted - kShifter;  // in [-1075, 0]
  const double r = __builtin_fma(-n, kLn2Low, __builtin_fma(-n, kLn2High, clamped));
  double p = 1.0 / 6227020800.0;  // 1 / 13!
  p = __builtin_fma(p, r, 1.0 / 479001600.0);
  p = __builtin_fma(p, r, 1.0 / 39916800.0);
  p = __builtin_fma(p, r, 1.0 / 3628800.0);
  p = __builtin_fma(p, r, 1.0 / 362880.0);
  p = __builtin_fma(p, r, 1.0 / 40320.0);
  p = __builtin_fma(p, r, 1.0 / 5040.0);
  p = __builtin_fma(p, r, 1.0 / 720.0);
  p = __builtin_fma(p, r, 1.0 / 120.0);
  p = __builtin_fma(p, r, 1.0 / 24.0);
  p = __builtin_fma(p, r, 1.0 / 6.0);
  p = __builtin_fma(p, r, 0.5);
  p = __builtin_fma(p, r, 1.0);
  p = __builtin_fma(p, r, 1.0);
  // n's integer from the shifter's low bits; 2^n = 2^half * 2^(n - half), each a normal double.
  const auto n_int = int64_t(std::bit_cast<uint64_t>(shifted) - std::bit_cast<uint64_t>(kShifter));
  const int64_t half = n_int / 2;
  const double first = std::bit_cast<double>(uint64_t(half + 1023) << 52);
  const double second = std::bit_cast<double>(uint64_t(n_int - half + 1023) << 52);
  return p * first * second;
}

}  // namespace minidl::kernels
