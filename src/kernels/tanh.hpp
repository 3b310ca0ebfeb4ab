#pragma once
// tanh in float: an exp-based formula with a polynomial near 0 (kernels/tanh_value.hpp),
// within 1.15 ulp of the exact tanh over every float, exactly +-1 past |x| = 9.0109, NaN stays
// NaN. Built for AVX-512, for AVX2 + FMA and plainly, the CPU's best chosen at run time; all
// three give every value the same bits, wherever it sits in the tensor and at any thread
// count. PyTorch's tanh is SLEEF's 1-ulp one (kernels/tanh_isa.hpp keeps it as the tests'
// reference); the two differ by at most one ulp. docs/numerics.md has the measurements.
#include <cstdint>

namespace minidl::kernels {

/// out[i] = tanh(x[i]) for n values (out may equal x).
void tanh_forward(float* out, const float* x, int64_t n);

}  // namespace minidl::kernels
