#include "minidl/kernels/tanh.hpp"

#include <algorithm>
#include <cstring>

#include "minidl/kernels/broadcast.hpp"

namespace minidl::kernels {
namespace {

// Eight floats in one value, as GCC and Clang's vector extension: one AVX register, or two
// SSE ones on a baseline build. The compiler would not vectorize the clamp's comparisons
// in a plain loop (they may trap, so it keeps branches).
using Float8 = float __attribute__((vector_size(32)));

void tanh_span(float* out, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {  // two vectors per round: independent chains overlap
    Float8 a, b;
    std::memcpy(&a, x + i, sizeof a);
    std::memcpy(&b, x + i + 8, sizeof b);
    a = tanh_rational(a);
    b = tanh_rational(b);
    std::memcpy(out + i, &a, sizeof a);
    std::memcpy(out + i + 8, &b, sizeof b);
  }
  for (; i < n; ++i) out[i] = tanh_rational(x[i]);
}

}  // namespace

void tanh_forward(float* out, const float* x, int64_t n) {
  constexpr int64_t kChunk = 4096;  // values per parallel task, a multiple of 16
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  if (n <= kParallelElements) {
    tanh_span(out, x, n);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) tanh_span(out + c * kChunk, x + c * kChunk, std::min(kChunk, n - c * kChunk));
}

}  // namespace minidl::kernels
