#include "kernels/tanh.hpp"

#include <sleef.h>

#include <algorithm>
#include <cstring>

#include "kernels/parallel_for.hpp"
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

}  // namespace

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
  constexpr int64_t kChunk = 4096;  // values per parallel task
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, grain_for(kChunk),
               [&](int64_t c) { tanh_values(out + c * kChunk, x + c * kChunk, std::min(kChunk, n - c * kChunk)); });
}

}  // namespace minidl::kernels
