#pragma once
// GELU and SiLU, forward and backward, as PyTorch's CPU kernels write them (the same
// formulas in the same order), with SLEEF's 1-ulp vector erf, exp and tanh. Every value goes
// through the same vector call wherever it sits, so results do not depend on the thread count.
#include <cstdint>

namespace minidl::kernels {

/// out[i] = gelu(x[i]): x / 2 * (1 + erf(x / sqrt 2)), or with tanh_approximation
/// x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).
/// out must not overlap x.
void gelu_forward(float* out, const float* x, int64_t n, bool tanh_approximation);
/// dx[i] = dout[i] * gelu'(x[i]); dx must overlap neither dout nor x.
void gelu_backward(float* dx, const float* dout, const float* x, int64_t n, bool tanh_approximation);

/// out[i] = x[i] / (1 + exp(-x[i])).
void silu_forward(float* out, const float* x, int64_t n);
/// dx[i] = dout[i] * s (1 + x (1 - s)), s = sigmoid(x[i]).
void silu_backward(float* dx, const float* dout, const float* x, int64_t n);

}  // namespace minidl::kernels
