#include "kernels/dim_copy.hpp"

#include <algorithm>

namespace minidl::kernels {

DimLayout layout_around(const Shape& shape, int64_t dim) {
  DimLayout l;
  if (shape.empty()) return l;
  l.extent = shape[size_t(dim)];
  for (int64_t k = 0; k < int64_t(shape.size()); ++k) {
    if (k < dim) l.outer *= shape[size_t(k)];
    if (k > dim) l.inner *= shape[size_t(k)];
  }
  return l;
}

void copy_along_dim(float* dst, DimRange to, const float* src, DimRange from, int64_t outer, int64_t count,
                    int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    float* dst_block = dst + (o * to.extent + to.start) * inner;            // (count, inner) rows, to.step apart
    const float* src_block = src + (o * from.extent + from.start) * inner;  // (count, inner) rows, from.step apart
    for (int64_t j = 0; j < count; ++j)
      std::copy_n(src_block + j * from.step * inner, inner, dst_block + j * to.step * inner);
  }
}

}  // namespace minidl::kernels
