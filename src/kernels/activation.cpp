#include "kernels/activation.hpp"

#include <sleef.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "kernels/broadcast.hpp"
#include "kernels/parallel_for.hpp"
#include "kernels/tanh.hpp"
#include "kernels/tanh_value.hpp"

namespace minidl::kernels {
namespace {

// SLEEF's dispatcher picks the best build for the CPU at run time; without AVX the 4-lane ones.
#ifdef __AVX__
constexpr int64_t kLanes = 8;
using FloatVec = __m256;
FloatVec erf_vector(FloatVec v) { return Sleef_erff8_u10(v); }
FloatVec exp_vector(FloatVec v) { return Sleef_expf8_u10(v); }
FloatVec tanh_vector(FloatVec v) { return Sleef_tanhf8_u10(v); }
#else
constexpr int64_t kLanes = 4;
using FloatVec = __m128;
FloatVec erf_vector(FloatVec v) { return Sleef_erff4_u10(v); }
FloatVec exp_vector(FloatVec v) { return Sleef_expf4_u10(v); }
FloatVec tanh_vector(FloatVec v) { return Sleef_tanhf4_u10(v); }
#endif

using Lanes = std::array<float, kLanes>;  // one block of values; a short tail padded with 0

// f applied to every lane with one vector call.
Lanes through(FloatVec (*f)(FloatVec), const Lanes& in) {
  FloatVec v;
  std::memcpy(&v, in.data(), sizeof v);
  v = f(v);
  Lanes out;
  std::memcpy(out.data(), &v, sizeof v);
  return out;
}

constexpr int64_t kChunk = 4096;  // values per parallel task, a multiple of kLanes

// Calls block(start, count) for consecutive blocks of at most kLanes values; chunks of
// them run in parallel.
template <typename Block>
void by_blocks(int64_t n, const Block& block) {
  parallel_chunks(n, kChunk, [&](int64_t start, int64_t count) {
    for (int64_t i = start; i < start + count; i += kLanes) block(i, std::min(kLanes, start + count - i));
  });
}

// PyTorch's constants (aten/src/ATen/native/cpu/Activation.cpp).
constexpr float kAlpha = float(M_SQRT1_2);                      // 1 / sqrt 2
constexpr float kBeta = float(M_2_SQRTPI * M_SQRT1_2 * 0.5);    // 1 / sqrt(2 pi)
constexpr float kTanhBeta = float(M_SQRT2 * M_2_SQRTPI * 0.5);  // sqrt(2 / pi)
constexpr float kKappa = 0.044715f;

// tanh(sqrt(2 / pi) (x + 0.044715 x^3)) by minidl's tanh (within 1.15 ulp, as SLEEF's,
// PyTorch's, is within 1; kernels/tanh.hpp), inline so that each GELU loop vectorizes as one
// pass: SLEEF's took a fifth of charlm's step (docs/benchmarks.md).
inline float gelu_tanh(float x) {
  const float x_cube = x * x * x;
  return tanh_value(kTanhBeta * (x + kKappa * x_cube));
}

Lanes scaled(const float* x, int64_t count, float scale) {
  Lanes v{};
  for (int64_t k = 0; k < count; ++k) v[size_t(k)] = x[k] * scale;
  return v;
}

}  // namespace

void gelu_forward(float* out, const float* x, int64_t n, bool tanh_approximation) {
  if (tanh_approximation) {
    parallel_chunks(n, kChunk, [&](int64_t i, int64_t count) {
      for (int64_t k = i; k < i + count; ++k) out[k] = 0.5f * x[k] * (1.0f + gelu_tanh(x[k]));
    });
    return;
  }
  by_blocks(n, [&](int64_t i, int64_t count) {
    const float* xi = x + i;
    const Lanes e = through(erf_vector, scaled(xi, count, kAlpha));
    for (int64_t k = 0; k < count; ++k) out[i + k] = xi[k] * 0.5f * (1.0f + e[size_t(k)]);
  });
}

void gelu_backward(float* dx, const float* dout, const float* x, int64_t n, bool tanh_approximation) {
  if (tanh_approximation) {
    parallel_chunks(n, kChunk, [&](int64_t i, int64_t count) {
      for (int64_t k = i; k < i + count; ++k) {
        const float v = x[k], tk = gelu_tanh(v);
        const float left_derivative = 0.5f * (1.0f + tk);
        const float right_derivative = 0.5f * v * (1.0f - tk * tk) * kTanhBeta * (1.0f + 3.0f * kKappa * v * v);
        dx[k] = dout[k] * (left_derivative + right_derivative);
      }
    });
    return;
  }
  by_blocks(n, [&](int64_t i, int64_t count) {
    const float* xi = x + i;
    const Lanes e = through(erf_vector, scaled(xi, count, kAlpha));
    Lanes half_square{};  // -x^2 / 2
    for (int64_t k = 0; k < count; ++k) half_square[size_t(k)] = xi[k] * xi[k] * -0.5f;
    const Lanes g = through(exp_vector, half_square);
    for (int64_t k = 0; k < count; ++k) {
      const float cdf = 0.5f * (1.0f + e[size_t(k)]);
      const float pdf = kBeta * g[size_t(k)];
      dx[i + k] = dout[i + k] * (cdf + xi[k] * pdf);
    }
  });
}

void tanh_span_sleef(float* out, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; i += kLanes) {
    const int64_t count = std::min(kLanes, n - i);
    Lanes in{};
    std::copy_n(x + i, count, in.begin());
    const Lanes t = through(tanh_vector, in);
    std::copy_n(t.begin(), count, out + i);
  }
}

void silu_forward(float* out, const float* x, int64_t n) {
  by_blocks(n, [&](int64_t i, int64_t count) {
    const Lanes e = through(exp_vector, scaled(x + i, count, -1.0f));  // exp(-x)
    for (int64_t k = 0; k < count; ++k) out[i + k] = x[i + k] / (1.0f + e[size_t(k)]);
  });
}

void silu_backward(float* dx, const float* dout, const float* x, int64_t n) {
  by_blocks(n, [&](int64_t i, int64_t count) {
    const Lanes e = through(exp_vector, scaled(x + i, count, -1.0f));
    for (int64_t k = 0; k < count; ++k) {
      const float sigmoid = 1.0f / (1.0f + e[size_t(k)]);
      dx[i + k] = dout[i + k] * sigmoid * (1.0f + x[i + k] * (1.0f - sigmoid));
    }
  });
}

}  // namespace minidl::kernels
