#include "kernels/broadcast.hpp"

#include <vector>

namespace minidl::kernels {

Shape broadcast_strides(const Shape& shape, const Shape& out) {
  Shape strides(out.size(), 0);
  const Shape own = contiguous_strides(shape);
  const size_t lead = out.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) strides[lead + d] = shape[d] == 1 ? 0 : own[d];
  return strides;
}

void sum_to_shape(const float* in, const Shape& in_shape, float* out, const Shape& kept_shape) {
  const int64_t out_count = numel(kept_shape);
  std::vector<double> acc(size_t(out_count), 0.0);
  const int64_t count = numel(in_shape);
  if (count > 0) {
    const Shape so = broadcast_strides(kept_shape, in_shape);
    const int64_t rank = int64_t(in_shape.size());
    const int64_t inner = rank == 0 ? 1 : in_shape.back();
    const int64_t io = rank == 0 ? 0 : so.back();
    Shape index(size_t(rank > 0 ? rank - 1 : 0), 0);
    int64_t oo = 0;
    for (int64_t row = 0; row < count / inner; ++row) {
      const float* x = in + row * inner;
      if (io == 0) {
        double s = 0.0;
        for (int64_t i = 0; i < inner; ++i) s += x[i];
        acc[size_t(oo)] += s;
      } else {
        for (int64_t i = 0; i < inner; ++i) acc[size_t(oo + i)] += x[i];
      }
      for (int64_t d = rank - 2; d >= 0; --d) {
        oo += so[size_t(d)];
        if (++index[size_t(d)] < in_shape[size_t(d)]) break;
        oo -= so[size_t(d)] * in_shape[size_t(d)];
        index[size_t(d)] = 0;
      }
    }
  }
  for (int64_t i = 0; i < out_count; ++i) out[i] = float(acc[size_t(i)]);
}

}  // namespace minidl::kernels
