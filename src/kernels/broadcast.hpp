#pragma once
// Plain loops behind the broadcasting ops: no autograd, no allocation beyond index state.
#include <cstdint>

#include "kernels/parallel_for.hpp"
#include "minidl/tensor/shape.hpp"

namespace minidl::kernels {

/// Strides (in elements) for reading a contiguous tensor of `shape` as if it had the
/// broadcast shape `out` (0 along expanded dims). `shape` is aligned to the right.
Shape broadcast_strides(const Shape& shape, const Shape& out);

/// out[i] = f(a[...], b[...]) over the broadcast shape `out_shape`.
template <typename F>
void broadcast_binary(const float* a, const Shape& a_shape, const float* b, const Shape& b_shape, float* out,
                      const Shape& out_shape, F f) {
  const int64_t count = numel(out_shape);
  if (a_shape == b_shape) {  // the common case: one flat loop
    parallel_for(count, kParallelElements, [&](int64_t i) { out[i] = f(a[i], b[i]); });
    return;
  }
  if (count == 0) return;
  const Shape sa = broadcast_strides(a_shape, out_shape);
  const Shape sb = broadcast_strides(b_shape, out_shape);
  const int64_t rank = int64_t(out_shape.size());
  const int64_t inner = rank == 0 ? 1 : out_shape.back();
  const int64_t ia = rank == 0 ? 0 : sa.back();
  const int64_t ib = rank == 0 ? 0 : sb.back();
  Shape index(size_t(rank > 0 ? rank - 1 : 0), 0);
  int64_t oa = 0, ob = 0;
  for (int64_t row = 0; row < count / inner; ++row) {
    float* o = out + row * inner;
    for (int64_t i = 0; i < inner; ++i) o[i] = f(a[oa + i * ia], b[ob + i * ib]);
    for (int64_t d = rank - 2; d >= 0; --d) {  // odometer over the leading dims
      oa += sa[size_t(d)];
      ob += sb[size_t(d)];
      if (++index[size_t(d)] < out_shape[size_t(d)]) break;
      oa -= sa[size_t(d)] * out_shape[size_t(d)];
      ob -= sb[size_t(d)] * out_shape[size_t(d)];
      index[size_t(d)] = 0;
    }
  }
}

/// Calls f(i, o) for every flat index i of a contiguous `in_shape` tensor, with o the flat
/// index of the `kept_shape` element (same rank, 1 along reduced dims) it reduces into.
template <typename F>
void for_each_reduced(const Shape& in_shape, const Shape& kept_shape, F f) {
  const int64_t count = numel(in_shape);
  if (count == 0) return;
  const Shape so = broadcast_strides(kept_shape, in_shape);
  const int64_t rank = int64_t(in_shape.size());
  Shape index(size_t(rank), 0);
  int64_t o = 0;
  for (int64_t i = 0; i < count; ++i) {
    f(i, o);
    for (int64_t d = rank - 1; d >= 0; --d) {
      o += so[size_t(d)];
      if (++index[size_t(d)] < in_shape[size_t(d)]) break;
      o -= so[size_t(d)] * in_shape[size_t(d)];
      index[size_t(d)] = 0;
    }
  }
}

/// out = sum of `in` over the dims where `kept_shape` (same rank as in_shape) is 1 and
/// in_shape is not. Accumulates in double.
void sum_to_shape(const float* in, const Shape& in_shape, float* out, const Shape& kept_shape);

}  // namespace minidl::kernels
