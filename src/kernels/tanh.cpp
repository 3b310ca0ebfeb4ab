#include "kernels/tanh.hpp"

#include "kernels/parallel_for.hpp"
#include "kernels/tanh_value.hpp"

namespace minidl::kernels {

void tanh_forward(float* out, const float* x, int64_t n) {
  constexpr int64_t kChunk = 4096;  // values per parallel task
  parallel_chunks(n, kChunk, [&](int64_t begin, int64_t count) { tanh_values(out + begin, x + begin, count); });
}

}  // namespace minidl::kernels
