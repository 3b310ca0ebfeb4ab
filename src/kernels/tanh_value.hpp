#pragma once
// minidl's float tanh, one value, and the loop tanh.cpp vectorizes. Only IEEE operations
// with one rounding each (+ - * /, fused multiply-adds written out, selects, bit
// operations), so any build gives every value the same bits: the vector loop agrees with
// one value at a time bit for bit (tests/test_tanh_kernel.cpp).
//
// The formula works on a = |x| and sets the sign of x last, so tanh(-x) = -tanh(x) exactly.
// a < 0.9: the odd polynomial a + a^3 p(a^2), p fitted on [0, 0.81] (Chebyshev fit of
//   (tanh(x) - x) / x^3 in s = x^2, 7 terms; scripts/fit_tanh.py).
// a >= 0.9: 1 - 2 / (e^(2a) + 1), e^(2a) = 2^n e^(2r), n = round(2a / ln 2),
//   r = a - n ln 2 / 2 (|r| <= ln 2 / 4), e^(2r) a degree-6 polynomial. Past 0.9,
//   2 / (e + 1) < 0.29, so its errors cost under half an ulp of the result. a is clamped to
//   9.1 (tanh rounds to 1 past 9.011), so e^(2a) never overflows: +-1 exactly there.
// NaN stays NaN (it takes the polynomial). Measured against double tanh over every float:
// at most 1.2 ulp, and monotonic (docs/numerics.md).
#include <bit>
#include <cstdint>

namespace minidl::kernels {
namespace {

inline uint32_t bits_of(float v) { return std::bit_cast<uint32_t>(v); }
inline float float_of(uint32_t b) { return std::bit_cast<float>(b); }

inline float tanh_value(float x) {
  constexpr uint32_t kSignBit = 0x80000000u;
  const float a = float_of(bits_of(x) & ~kSignBit);
  // Small a: a + a^3 p(a^2).
  const float s = a * a;
  float p = -0.000520352681633085f;
  p = __builtin_fmaf(p, s, 0.00275911926291883f);
  p = __builtin_fmaf(p, s, -0.008450872264802456f);
  p = __builtin_fmaf(p, s, 0.021759409457445145f);
  p = __builtin_fmaf(p, s, -0.05395388975739479f);
  p = __builtin_fmaf(p, s, 0.13333262503147125f);
  p = __builtin_fmaf(p, s, -0.3333333134651184f);
  const float small = __builtin_fmaf(a * s, p, a);
  // Large a: 1 - 2 / (e^(2a) + 1). The clamp compares bits (one integer min): NaN's bits lie
  // above 9.1's, so NaN is clamped too, and takes the polynomial below.
  constexpr uint32_t kClampBits = 0x4111999au;  // 9.1f
  const float clamped = float_of(bits_of(a) < kClampBits ? bits_of(a) : kClampBits);
  // Adding 1.5 * 2^23 rounds to an integer; the 127 of the exponent bias rides along.
  constexpr float kShifter = 12582912.0f + 127.0f;
  const float shifted = __builtin_fmaf(clamped, 2.88539f, kShifter);  // 2a / ln 2 + shifter
  const float n = shifted - kShifter;                                 // in [0, 26]
  // ln 2 / 2 as one float is 2.7e-9 relatively off: n times that is far below what matters.
  const float r = __builtin_fmaf(n, -0.3465736f, clamped);
  float q = 0.08922376483678818f;
  q = __builtin_fmaf(q, r, 0.26800671219825745f);
  q = __builtin_fmaf(q, r, 0.6666616201400757f);
  q = __builtin_fmaf(q, r, 1.3333131074905396f);
  q = __builtin_fmaf(q, r, 2.0f);
  q = __builtin_fmaf(q, r, 2.0f);
  q = __builtin_fmaf(q, r, 1.0f);
  const float scale = float_of(bits_of(shifted) << 23);  // 2^n: the low bits hold n + 127
  const float large = 1.0f - 2.0f / __builtin_fmaf(q, scale, 1.0f);
  const float magnitude = a >= 0.9f ? large : small;
  return float_of(bits_of(magnitude) | (bits_of(x) & kSignBit));
}

// out[i] = tanh(x[i]) for i in [0, n): the loop the compiler vectorizes for its target.
inline void tanh_values(float* out, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = tanh_value(x[i]);
}

}  // namespace
}  // namespace minidl::kernels
