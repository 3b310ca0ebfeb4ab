#include "kernels/tanh.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/broadcast.hpp"
#include "kernels/parallel_for.hpp"

namespace minidl::kernels {
namespace {

// One SIMD register of floats (8 with AVX, 4 with SSE), as GCC and Clang's vector
// extension: the compiler would not vectorize the clamp's comparisons in a plain loop
// (they may trap, so it keeps branches).
#ifdef __AVX__
constexpr int64_t kLanes = 8;
#else
constexpr int64_t kLanes = 4;
#endif
using FloatVec = float __attribute__((vector_size(kLanes * sizeof(float))));

void tanh_span(float* out, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {  // two vectors per round: independent chains overlap
    FloatVec a, b;
    std::memcpy(&a, x + i, sizeof a);
    std::memcpy(&b, x + i + kLanes, sizeof b);
    a = tanh_rational(a);
    b = tanh_rational(b);
    std::memcpy(out + i, &a, sizeof a);
    std::memcpy(out + i + kLanes, &b, sizeof b);
  }
  for (; i < n; ++i) out[i] = tanh_rational(x[i]);
}

}  // namespace

void tanh_forward(float* out, const float* x, int64_t n) {
  constexpr int64_t kChunk = 4096;  // values per parallel task, a multiple of 2 * kLanes
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, grain_for(kChunk),
               [&](int64_t c) { tanh_span(out + c * kChunk, x + c * kChunk, std::min(kChunk, n - c * kChunk)); });
}

}  // namespace minidl::kernels
