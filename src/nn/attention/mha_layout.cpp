#include "nn/attention/mha_layout.hpp"

#include "minidl/ops/binary.hpp"
#include "minidl/ops/shape_ops.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

MhaLayout MhaLayout::of(const Tensor& query, const Tensor& key, const Tensor& value,
                        const MultiheadAttentionOptions& options) {
  const int64_t rank = query.dim(), E = options.embed_dim;
  const auto shapes = [&] {
    return cat("got query ", to_string(query.shape()), ", key ", to_string(key.shape()), ", value ",
               to_string(value.shape()));
  };
  if ((rank != 2 && rank != 3) || key.dim() != rank || value.dim() != rank)
    throw Error(
        cat("MultiheadAttention: expected query, key and value all of rank 3 (batched) or all of rank 2 "
            "(unbatched), ",
            shapes()));
  MhaLayout layout;
  layout.unbatched = rank == 2;
  layout.batch_first = options.batch_first();
  const int64_t t_dim = layout.unbatched || !layout.batch_first ? 0 : 1, n_dim = 1 - t_dim;
  layout.L = query.size(t_dim);
  layout.S = key.size(t_dim);
  layout.N = layout.unbatched ? 1 : query.size(n_dim);
  const bool batches_agree = layout.unbatched || (key.size(n_dim) == layout.N && value.size(n_dim) == layout.N);
  if (query.size(-1) != E || key.size(-1) != E || value.size(-1) != E || value.size(t_dim) != layout.S ||
      !batches_agree)
    throw Error(cat("MultiheadAttention: expected query ", layout.batch_first ? "(N, L, E)" : "(L, N, E)",
                    " and key and value ", layout.batch_first ? "(N, S, E)" : "(S, N, E)",
                    " (or unbatched (L, E), (S, E)) with E = embed_dim = ", E, " (kdim and vdim are not supported), ",
                    shapes()));
  return layout;
}

Tensor MhaLayout::to_batch_first(const Tensor& x) const {
  if (unbatched) return x.reshape({1, x.size(0), x.size(1)});
  return batch_first ? x : transpose(x, 0, 1);
}

Tensor MhaLayout::from_batch_first(const Tensor& y) const {
  if (unbatched) return y.reshape({y.size(1), y.size(2)});
  return batch_first ? y : transpose(y, 0, 1);
}

Tensor MhaLayout::weights_out(const Tensor& weights) const {
  if (!unbatched) return weights;
  return weights.reshape(Shape(weights.shape().begin() + 1, weights.shape().end()));
}

namespace {

Tensor padding_part(const AttentionMask& mask, const MhaLayout& layout) {
  const Shape expected = layout.unbatched ? Shape{layout.S} : Shape{layout.N, layout.S};
  if (mask.tensor().shape() != expected)
    throw Error(cat("MultiheadAttention: expected key_padding_mask of shape ",
                    layout.unbatched ? "(S) = " : "(N, S) = ", to_string(expected), ", got ",
                    to_string(mask.tensor().shape())));
  return mask.as_additive().reshape({layout.N, 1, 1, layout.S});
}

Tensor attn_part(const AttentionMask& mask, const MhaLayout& layout, int64_t heads) {
  const Shape& shape = mask.tensor().shape();
  const Shape square{layout.L, layout.S}, per_head{layout.unbatched ? heads : layout.N * heads, layout.L, layout.S};
  if (shape == square) return mask.as_additive().reshape({1, 1, layout.L, layout.S});
  if (shape == per_head) return mask.as_additive().reshape({layout.N, heads, layout.L, layout.S});
  throw Error(cat("MultiheadAttention: expected attn_mask of shape (L, S) = ", to_string(square), " or ",
                  layout.unbatched ? "(num_heads, L, S) = " : "(N * num_heads, L, S) = ", to_string(per_head), ", got ",
                  to_string(shape)));
}

}  // namespace

Tensor MhaLayout::merged_mask(const MhaCall& call, int64_t heads) const {
  if (call.is_causal && !call.attn_mask.defined())
    throw Error(
        "MultiheadAttention: Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
        "method `generate_square_subsequent_mask` to create this mask.");
  const Tensor padding = call.key_padding_mask.defined() ? padding_part(call.key_padding_mask, *this) : Tensor();
  const Tensor attn = call.attn_mask.defined() ? attn_part(call.attn_mask, *this, heads) : Tensor();
  if (padding.defined() && attn.defined()) return padding + attn;
  return padding.defined() ? padding : attn;
}

}  // namespace minidl::nn
