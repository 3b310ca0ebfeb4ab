#pragma once
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// (M, K) x (K, N) -> (M, N) through cblas_sgemm.
Tensor matmul(const Tensor& a, const Tensor& b);

/// op(a) x op(b) where op transposes when asked: the transpose is a flag to sgemm,
/// never a copy. matmul_t(x, w, false, true) is x W^T.
Tensor matmul_t(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b);

/// y = x W^T + b in one sgemm (the bias is written first and sgemm adds onto it).
/// x (N, in), weight (out, in), bias (out) or undefined.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

}  // namespace minidl
