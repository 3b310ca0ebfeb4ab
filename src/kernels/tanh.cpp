#include "kernels/tanh.hpp"

#include <sleef.h>

#include <algorithm>
#include <cstring>

#include "kernels/broadcast.hpp"
#include "kernels/parallel_for.hpp"

namespace minidl::kernels {
namespace {

// SLEEF's dispatcher picks the best build of the function for the CPU at run time (AVX2
// with FMA here); without AVX the 4-lane SSE one.
#ifdef __AVX__
constexpr int64_t kLanes = 8;
using FloatVec = __m256;
FloatVec tanh_vector(FloatVec x) { return Sleef_tanhf8_u10(x); }
#else
constexpr int64_t kLanes = 4;
using FloatVec = __m128;
FloatVec tanh_vector(FloatVec x) { return Sleef_tanhf4_u10(x); }
#endif

// `count` (at most kLanes) values through one vector call; a short tail is padded with 0.
void tanh_lanes(float* out, const float* x, int64_t count) {
  float lanes[kLanes] = {};
  std::memcpy(lanes, x, size_t(count) * sizeof(float));
  FloatVec v;
  std::memcpy(&v, lanes, sizeof v);
  v = tanh_vector(v);
  std::memcpy(lanes, &v, sizeof v);
  std::memcpy(out, lanes, size_t(count) * sizeof(float));
}

void tanh_span(float* out, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    FloatVec v;
    std::memcpy(&v, x + i, sizeof v);
    v = tanh_vector(v);
    std::memcpy(out + i, &v, sizeof v);
  }
  if (i < n) tanh_lanes(out + i, x + i, n - i);
}

}  // namespace

void tanh_forward(float* out, const float* x, int64_t n) {
  constexpr int64_t kChunk = 4096;  // values per parallel task, a multiple of kLanes
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, grain_for(kChunk),
               [&](int64_t c) { tanh_span(out + c * kChunk, x + c * kChunk, std::min(kChunk, n - c * kChunk)); });
}

}  // namespace minidl::kernels
