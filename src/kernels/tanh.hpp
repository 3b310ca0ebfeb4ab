#pragma once
// tanh through SLEEF's vector tanhf with a 1-ulp bound (Sleef_tanhf8_u10), the function
// PyTorch's CPU kernels call: its values are PyTorch's (bit for bit with PyTorch's AVX2
// kernels on the tests' grid), exactly +-1 beyond |x| = 8.66, NaN stays NaN. Every value,
// a tail's too, goes through the same vector call, so a value's result does not depend on
// where it sits or on the thread count. docs/numerics.md has the measurements behind it.
#include <cstdint>

namespace minidl::kernels {

/// out[i] = tanh(x[i]) for n values (out may equal x).
void tanh_forward(float* out, const float* x, int64_t n);

}  // namespace minidl::kernels
