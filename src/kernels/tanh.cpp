#include "kernels/tanh.hpp"

#include <sleef.h>

#include <algorithm>
#include <cstring>

#include "kernels/parallel_for.hpp"
#include "kernels/tanh_isa.hpp"
#include "kernels/tanh_value.hpp"

namespace minidl::kernels {
namespace {

// SLEEF's dispatcher picks the best build of the function for the CPU at run time; without
// AVX the 4-lane SSE one.
#ifdef __AVX__
constexpr int64_t kSleefLanes = 8;
using SleefVec = __m256;
SleefVec sleef_tanh(SleefVec x) { return Sleef_tanhf8_u10(x); }
#else
constexpr int64_t kSleefLanes = 4;
using SleefVec = __m128;
SleefVec sleef_tanh(SleefVec x) { return Sleef_tanhf4_u10(x); }
#endif

using Span = void (*)(float*, const float*, int64_t);

// The CPU's best build of the loop, chosen once.
Span best_span() {
#if defined(MINIDL_TANH_X86_BUILDS)
  if (cpu_has_avx512()) return tanh_span_avx512;
  if (cpu_has_avx2_fma()) return tanh_span_avx2;
#endif
  return tanh_span_portable;
}

}  // namespace

#if defined(MINIDL_TANH_X86_BUILDS)
bool cpu_has_avx2_fma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
bool cpu_has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
}
#endif

void tanh_span_portable(float* out, const float* x, int64_t n) { tanh_values(out, x, n); }

void tanh_span_sleef(float* out, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + kSleefLanes <= n; i += kSleefLanes) {
    SleefVec v;
    std::memcpy(&v, x + i, sizeof v);
    v = sleef_tanh(v);
    std::memcpy(out + i, &v, sizeof v);
  }
  if (i < n) {
    const int64_t count = n - i;  // a short tail is padded with 0
    float lanes[kSleefLanes] = {};
    std::memcpy(lanes, x + i, size_t(count) * sizeof(float));
    SleefVec v;
    std::memcpy(&v, lanes, sizeof v);
    v = sleef_tanh(v);
    std::memcpy(lanes, &v, sizeof v);
    std::memcpy(out + i, lanes, size_t(count) * sizeof(float));
  }
}

void tanh_forward(float* out, const float* x, int64_t n) {
  static const Span span = best_span();
  constexpr int64_t kChunk = 4096;  // values per parallel task
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, grain_for(kChunk),
               [&](int64_t c) { span(out + c * kChunk, x + c * kChunk, std::min(kChunk, n - c * kChunk)); });
}

}  // namespace minidl::kernels
