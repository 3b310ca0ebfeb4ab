#pragma once
// Elementwise unary ops. Backwards that need the output (exp, tanh, sigmoid, sqrt,
// rsqrt) capture the output, not the input.
#include "minidl/tensor/tensor.hpp"

namespace minidl {

Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor pow(const Tensor& x, float exponent);
Tensor tanh(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor sigmoid(const Tensor& x);

inline Tensor operator-(const Tensor& x) { return neg(x); }

}  // namespace minidl
