#pragma once
// Multi-head self-attention read straight from a packed query|key|value projection, the
// attention of nanoGPT's CausalSelfAttention:
//
//   q, k, v = c_attn(x).split(C, dim=2)                  # 3 x (B, T, C)
//   q = q.view(B, T, H, D).transpose(1, 2)               # (B, H, T, D); k and v alike
//   y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
//   y = y.transpose(1, 2).contiguous().view(B, T, C)
//
// as one op: each head's products are sgemm calls on the rows of qkv where they lie (3C
// floats apart), and each head writes its D columns of y, so none of the split, the
// transposes or the merge is a copy. Its own backward writes every head's gradients into
// the packed (B, T, 3C) gradient the same way.
//
//   Tensor y = self_attention_packed((*c_attn)(x), heads, /*is_causal=*/true);  // (B, T, C)
//
// Generation one position at a time keeps each layer's projections in a LayerCache, as
// inference libraries keep their key/value cache: the cached call appends the new positions
// and lets their queries attend to every position so far.
#include <cstdint>
#include <vector>

#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// qkv (B, T, 3C): each position's query, key and value side by side, C = heads * D. Returns
/// (B, T, C): the heads' outputs side by side. is_causal: position t attends to 0..t; the
/// scale is 1 / sqrt(D). `weights`, when given, receives the attention weights (B, H, T, T)
/// (read them only: writing into them would change what the backward uses, which it refuses).
/// The gradient flows to qkv. A qkv not of rank 3, a last dim not 3C with heads dividing C,
/// or heads < 1 is an error naming the shape and the head count.
Tensor self_attention_packed(const Tensor& qkv, int64_t heads, bool is_causal, Tensor* weights = nullptr);

/// One attention layer's key/value cache: the packed rows of every position so far (their
/// queries ride along, so the op reads keys and values as the uncached call does).
struct LayerCache {
  Tensor qkv;  // (B, t, 3C); undefined before the first call
  int64_t length() const { return qkv.defined() ? qkv.size(1) : 0; }
};
using KVCache = std::vector<LayerCache>;  // one per layer of a model

/// The cached call, for generation (no graph: a qkv that requires grad is an error): qkv
/// (B, L, 3C) of the next L positions is appended to cache, and each new position attends to
/// itself and every position before it (causal, aligned bottom-right). Returns (B, L, C). A
/// qkv whose batch or width differs from the cache's is an error naming both shapes.
Tensor self_attention_packed(const Tensor& qkv, int64_t heads, LayerCache& cache);

}  // namespace minidl
