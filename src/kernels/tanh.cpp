#include "kernels/tanh.hpp"

#include <algorithm>

#include "kernels/parallel_for.hpp"
#include "kernels/tanh_value.hpp"

namespace minidl::kernels {

void tanh_forward(float* out, const float* x, int64_t n) {
  constexpr int64_t kChunk = 4096;  // values per parallel task
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, grain_for(kChunk),
               [&](int64_t c) { tanh_values(out + c * kChunk, x + c * kChunk, std::min(kChunk, n - c * kChunk)); });
}

}  // namespace minidl::kernels
