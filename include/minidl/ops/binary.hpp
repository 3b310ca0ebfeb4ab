#pragma once
// Elementwise binary ops with NumPy broadcasting; each has its backward beside it in
// src/ops/binary.cpp, reducing the gradient back to each input's shape.
#include "minidl/tensor/tensor.hpp"

namespace minidl {

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);

/// Sums a gradient over the dims that broadcasting expanded, giving `shape` back.
Tensor sum_to(const Tensor& grad, const Shape& shape);

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, float b) { return add(a, Tensor::scalar(b)); }
inline Tensor operator-(const Tensor& a, float b) { return sub(a, Tensor::scalar(b)); }
inline Tensor operator*(const Tensor& a, float b) { return mul(a, Tensor::scalar(b)); }
inline Tensor operator/(const Tensor& a, float b) { return div(a, Tensor::scalar(b)); }
inline Tensor operator+(float a, const Tensor& b) { return add(Tensor::scalar(a), b); }
inline Tensor operator-(float a, const Tensor& b) { return sub(Tensor::scalar(a), b); }
inline Tensor operator*(float a, const Tensor& b) { return mul(Tensor::scalar(a), b); }
inline Tensor operator/(float a, const Tensor& b) { return div(Tensor::scalar(a), b); }

}  // namespace minidl
