// tanh_values compiled for AVX-512, 16 lanes (x86-64-v4; CMakeLists.txt sets the flags for
// this file only), called when the CPU has it (kernels/tanh.cpp).
#include "kernels/tanh_isa.hpp"
#include "kernels/tanh_value.hpp"

namespace minidl::kernels {

void tanh_span_avx512(float* out, const float* x, int64_t n) { tanh_values(out, x, n); }

}  // namespace minidl::kernels
