#pragma once
// nn::MultiheadAttention's shapes: its inputs checked and brought to (N, T, E), its output
// and weights brought back, and its two masks merged into one added to the scores.
#include <cstdint>

#include "minidl/nn/attention/multihead_attention.hpp"

namespace minidl::nn {

struct MhaLayout {
  bool unbatched = false;    // (L, E) input
  bool batch_first = false;  // (N, L, E) input
  int64_t N = 1, L = 0, S = 0;

  /// Checks ranks, embed_dim, batch sizes and key/value lengths, naming all three shapes.
  static MhaLayout of(const Tensor& query, const Tensor& key, const Tensor& value,
                      const MultiheadAttentionOptions& options);
  /// The caller's layout to (N, T, E); from_batch_first takes (N, L, E) back.
  Tensor to_batch_first(const Tensor& x) const;
  Tensor from_batch_first(const Tensor& y) const;
  /// (N, ..., L, S) weights without N for unbatched input.
  Tensor weights_out(const Tensor& weights) const;
  /// key_padding_mask (N, S) and attn_mask (L, S) or (N H, L, S) in their float form, summed
  /// into (N or 1, H or 1, L, S); undefined when neither is given. Shapes are checked here.
  Tensor merged_mask(const MhaCall& call, int64_t heads) const;
};

}  // namespace minidl::nn
