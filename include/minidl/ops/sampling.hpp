#pragma once
// Drawing tokens from a model's logits, as makemore's and nanoGPT's generate() do:
//
//   Tensor logits = last_logits / temperature;   // (B, V); below 1 sharpens, above flattens
//   logits = top_k_filter(logits, k);            // optional: only the k largest stay
//   Tensor next = multinomial(softmax(logits, -1), 1, false, gen);  // (B, 1) token indices
//
// Indices come back as float32 values (minidl tensors are float32), exact up to 2^24.
#include <cstdint>

#include "minidl/tensor/generator.hpp"
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// torch.multinomial: num_samples category indices per row of `probs` (V) or (B, V), drawn
/// in proportion to the row's entries (weights: finite, >= 0, a positive sum; they need not
/// add up to 1). Without replacement a category is drawn at most once per row, so a row needs
/// num_samples categories of positive weight. Returns (num_samples) or (B, num_samples);
/// not differentiable. The draws come from `generator`, not PyTorch's stream: the same
/// distribution, other numbers.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator& generator);
/// The same from the default generator (torch.multinomial without generator=).
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false);

/// torch.topk's result: the k largest (or smallest) entries along dim, in order, and their
/// indices along dim as float32.
struct TopK {
  Tensor values;
  Tensor indices;
};
/// torch.topk(x, k, dim, largest, sorted=True): values sorted, largest first (smallest first
/// when largest is false); equal values keep index order; NaN counts as the largest value,
/// as in PyTorch. The gradient of `values` goes back to the entries picked.
TopK topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true);

/// Sets every logit below the k-th largest of its row (the last dim) to -inf, nanoGPT's
/// `logits[logits < v[:, [-1]]] = -inf` after topk: entries equal to the k-th value stay,
/// so ties may keep more than k. 1 <= k <= the row's size. Differentiable (masked_fill).
Tensor top_k_filter(const Tensor& logits, int64_t k);

}  // namespace minidl
