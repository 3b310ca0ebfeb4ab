#pragma once
// tanh in float: an exp-based formula with a polynomial near 0 (kernels/tanh_value.hpp),
// within 1.15 ulp of the exact tanh over every float, exactly +-1 past |x| = 9.0109, NaN stays
// NaN; every value gets the same bits wherever it sits in the tensor and at any thread
// count. PyTorch's tanh is SLEEF's 1-ulp one (tanh_span_sleef below, the tests' reference);
// the two differ by at most one ulp. docs/numerics.md has the measurements.
#include <cstdint>

namespace minidl::kernels {

/// out[i] = tanh(x[i]) for n values (out may equal x).
void tanh_forward(float* out, const float* x, int64_t n);

/// SLEEF's 1-ulp Sleef_tanhf8_u10 (PyTorch's tanh) over n values: the reference the tests
/// and bench_tanh compare with (in activation.cpp, beside the other SLEEF calls).
void tanh_span_sleef(float* out, const float* x, int64_t n);

}  // namespace minidl::kernels
