// tanh_values compiled for AVX2 with FMA (x86-64-v3; CMakeLists.txt sets the flags for this
// file only), called when the CPU has them (kernels/tanh.cpp).
#include "kernels/tanh_isa.hpp"
#include "kernels/tanh_value.hpp"

namespace minidl::kernels {

void tanh_span_avx2(float* out, const float* x, int64_t n) { tanh_values(out, x, n); }

}  // namespace minidl::kernels
