#pragma once
// Embedding lookup, torch.nn.functional.embedding: row i of the output is the row of weight
// that indices[i] names. The module is nn::Embedding (minidl/nn/embedding.hpp); the same op
// gathers rows of any differentiable (V, D) tensor, such as an activation.
//
//   Tensor tokens = Tensor::from_vector({3, 0, 3}, {1, 3});  // (B, T) token ids, float32
//   Tensor x = embedding(tokens, wte);                        // (B, T, D), wte (V, D)
#include <cstdint>
#include <optional>

#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// indices of any shape, holding integers in [0, V) stored as float32 (minidl tensors are
/// float32, exact up to 2^24), and weight (V, D) -> (*indices.shape, D). The gradient goes to
/// weight only: a scatter-add of the output's gradient rows, so a row looked up twice gets the
/// sum of both; the padding_idx row (negative counts from V, as PyTorch) gets none, though the
/// forward still reads it. A non-integer or out-of-range index, a weight that is not 2-D or a
/// padding_idx outside [-V, V) is an error naming what came.
Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx = std::nullopt);

}  // namespace minidl
