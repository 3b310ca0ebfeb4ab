#include "minidl/kernels/tanh.hpp"

#include "minidl/kernels/broadcast.hpp"

namespace minidl::kernels {

void tanh_forward(float* out, const float* x, int64_t n) {
#pragma omp parallel for simd if (n > kParallelElements) schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = tanh_rational(x[i]);
}

}  // namespace minidl::kernels
