#pragma once
// The builds of the tanh loop, one per instruction set, for kernels/tanh.cpp's dispatch and
// for the tests that hold them to one another and to SLEEF's. Each gives the same bits.
#include <cstdint>

namespace minidl::kernels {

/// The loop as the library's own flags compile it: runs on any CPU.
void tanh_span_portable(float* out, const float* x, int64_t n);
/// SLEEF's 1-ulp Sleef_tanhf8_u10 (PyTorch's tanh): the reference the tests compare with.
void tanh_span_sleef(float* out, const float* x, int64_t n);

#if defined(MINIDL_TANH_X86_BUILDS)
/// Compiled for AVX2 + FMA; call only when cpu_has_avx2_fma().
void tanh_span_avx2(float* out, const float* x, int64_t n);
/// Compiled for AVX-512 (F, DQ, VL, BW); call only when cpu_has_avx512().
void tanh_span_avx512(float* out, const float* x, int64_t n);
bool cpu_has_avx2_fma();
bool cpu_has_avx512();
#endif

}  // namespace minidl::kernels
