#pragma once
// minidl's float tanh, one value: the loop each instruction set compiles (tanh_avx2.cpp,
// tanh_avx512.cpp, tanh.cpp). Only IEEE operations with one rounding each (+ - * /, fused
// multiply-adds written out, selects), so every build gives every value the same bits:
// AVX2, AVX-512 and the plain loop agree bit for bit (tests/test_tanh_kernel.cpp).
//
// |x| < 0.9: the odd polynomial x + x^3 p(x^2), p fitted on [0, 0.81] (Chebyshev fit of
//   (tanh(x) - x) / x^3 in s = x^2, 9 terms; scripts/fit_tanh.py).
// |x| >= 0.9: 1 - 2 / (e^(2|x|) + 1) with the sign of x, e^y = 2^n e^r, n = round(y / ln 2),
//   r = y - n ln 2 in two parts (|r| <= ln 2 / 2), e^r a degree-7 polynomial. Past 0.9,
//   2 / (e + 1) < 0.29, so its rounding costs under half an ulp of the result. |x| is
//   clamped to 10 (tanh rounds to 1 past 9.011), so e^y never overflows: +-1 exactly there.
// NaN stays NaN. Measured against double tanh over every float: at most 1.03 ulp
// (docs/numerics.md).
#include <cstdint>
#include <cstring>

namespace minidl::kernels {
namespace {

inline float tanh_value(float x) {
  const float a = __builtin_fabsf(x);
  // Small |x|: x + x^3 p(x^2).
  const float s = x * x;
  float p = -6.370259e-05f;
  p = __builtin_fmaf(p, s, 0.00038937578f);
  p = __builtin_fmaf(p, s, -0.0013133938f);
  p = __builtin_fmaf(p, s, 0.0035294883f);
  p = __builtin_fmaf(p, s, -0.008846537f);
  p = __builtin_fmaf(p, s, 0.021866942f);
  p = __builtin_fmaf(p, s, -0.053968057f);
  p = __builtin_fmaf(p, s, 0.13333333f);
  p = __builtin_fmaf(p, s, -0.33333334f);
  const float small = __builtin_fmaf(x * s, p, x);
  // Large |x|: 1 - 2 / (e^y + 1), y = 2 |x| (20 for NaN and past 10: a finite exponent).
  const float y = a <= 10.0f ? 2.0f * a : 20.0f;
  constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float n = __builtin_fmaf(y, 1.44269504f, kShifter) - kShifter;
  float r = __builtin_fmaf(n, -0.693145752f, y);  // ln 2's high part, exact times n <= 29
  r = __builtin_fmaf(n, -1.42860677e-06f, r);     // and its low part
  float q = 0.0001989108f;
  q = __builtin_fmaf(q, r, 0.0013933731f);
  q = __builtin_fmaf(q, r, 0.0083333105f);
  q = __builtin_fmaf(q, r, 0.041666463f);
  q = __builtin_fmaf(q, r, 0.16666667f);
  q = __builtin_fmaf(q, r, 0.5f);
  q = __builtin_fmaf(q, r, 1.0f);
  q = __builtin_fmaf(q, r, 1.0f);
  const int32_t exponent_bits = (int32_t(n) + 127) << 23;  // 2^n, n in [0, 29]
  float scale;
  std::memcpy(&scale, &exponent_bits, sizeof scale);
  const float large = __builtin_copysignf(1.0f - 2.0f / (q * scale + 1.0f), x);
  const float result = a < 0.9f ? small : large;
  return a == a ? result : x;
}

// out[i] = tanh(x[i]) for i in [0, n): the loop the compiler vectorizes for its target.
inline void tanh_values(float* out, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = tanh_value(x[i]);
}

}  // namespace
}  // namespace minidl::kernels
