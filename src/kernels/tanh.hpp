#pragma once
// A tanh the compiler vectorizes: std::tanh costs 10 to 20 ns a value, and a deep tanh net
// spends more time there than in its matrix products. This is Eigen's float tanh: on
// x clamped to +-7.9053111 (where float tanh is 1 to rounding), an odd degree-13
// polynomial over an even degree-6 one. Max abs error about 4e-7 against double tanh
// (tests/test_tanh_kernel.cpp checks a dense grid); NaN stays NaN, +-inf gives +-1.
#include <cstdint>

namespace minidl::kernels {

/// The rational approximation on any arithmetic type: float, or a GCC/Clang vector of
/// floats (vector_size), whose `?:` compares lane by lane. The clamp keeps a NaN: both
/// comparisons are false for it.
template <typename T>
inline T tanh_rational(T x) {
  constexpr float kClamp = 7.90531110763549805f;
  const T hi = T{} + kClamp, lo = T{} - kClamp;  // in every lane
  x = kClamp < x ? hi : x;
  x = x < -kClamp ? lo : x;
  const T x2 = x * x;
  T p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;  // numerator: x (a1 + a3 x^2 + ... + a13 x^12)
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  T q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;  // denominator: b0 + b2 x^2 + b4 x^4 + b6 x^6
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  return x * p / q;
}

/// out[i] = tanh(x[i]) for n values (out may equal x).
void tanh_forward(float* out, const float* x, int64_t n);

}  // namespace minidl::kernels
