#pragma once
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// torch.matmul: (n, k) x (k, m) -> (n, m) through one sgemm; a 1-D operand is a row
/// (first) or a column (second) whose dim is dropped from the result, so (k) x (k) is a dot
/// product; operands of rank 3 or more are batches of matrices whose batch dims broadcast:
/// (B, n, k) x (k, m) is one sgemm over B * n rows, (B, n, k) x (B, k, m) one per batch.
Tensor matmul(const Tensor& a, const Tensor& b);

/// op(a) x op(b) where op transposes when asked: the transpose is a flag to sgemm,
/// never a copy. matmul_t(x, w, false, true) is x W^T.
Tensor matmul_t(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b);

/// y = x W^T + b: one sgemm, then the bias added to each row.
/// x (N, *, in) of any rank (1-D: one example), weight (out, in), bias (out) or undefined;
/// y (N, *, out), as nn.Linear.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

}  // namespace minidl
