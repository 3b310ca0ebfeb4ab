#include "minidl/nn/attention/multihead_attention.hpp"

#include "minidl/nn/init.hpp"
#include "minidl/ops/activation.hpp"
#include "minidl/ops/attention.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/matmul.hpp"
#include "minidl/ops/packed_attention.hpp"
#include "minidl/ops/reduce.hpp"
#include "minidl/ops/shape_ops.hpp"
#include "minidl/ops/slicing.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

MultiheadAttention::MultiheadAttention(const MultiheadAttentionOptions& options, Generator& gen) : options_(options) {
  const int64_t E = options.embed_dim, H = options.num_heads;
  if (E <= 0 || H <= 0 || E % H != 0)
    throw Error(cat("MultiheadAttention: expected embed_dim divisible by num_heads (both positive), got embed_dim=", E,
                    ", num_heads=", H));
  check_dropout_probability(options.dropout());
  in_proj_weight = register_parameter("in_proj_weight", Tensor::empty({3 * E, E}));
  in_proj_bias = register_parameter("in_proj_bias", options.bias() ? Tensor::empty({3 * E}) : Tensor());
  // PyTorch builds out_proj (drawing its weight and bias) before _reset_parameters.
  out_proj = register_module(
      "out_proj", std::make_shared<NonDynamicallyQuantizableLinear>(LinearOptions(E, E).bias(options.bias()), gen));
  reset_parameters(gen);
}

void MultiheadAttention::reset_parameters(Generator& gen) {
  init::xavier_uniform_(in_proj_weight, 1.0, gen);
  if (in_proj_bias.defined()) init::zeros_(in_proj_bias);
  if (out_proj->bias.defined()) init::zeros_(out_proj->bias);
}

namespace {

// The caller's shapes: query, key and value checked and brought to (N, T, E), the output
// and weights brought back.
struct MhaLayout {
  bool unbatched = false;    // (L, E) input
  bool batch_first = false;  // (N, L, E) input
  int64_t N = 1, L = 0, S = 0;

  Tensor to_batch_first(const Tensor& x) const {
    if (unbatched) return x.reshape({1, x.size(0), x.size(1)});
    return batch_first ? x : transpose(x, 0, 1);
  }
  Tensor from_batch_first(const Tensor& y) const {
    if (unbatched) return y.reshape({y.size(1), y.size(2)});
    return batch_first ? y : transpose(y, 0, 1);
  }
  // (N, ..., L, S) weights without N for unbatched input.
  Tensor weights_out(const Tensor& weights) const {
    return unbatched ? weights.reshape(Shape(weights.shape().begin() + 1, weights.shape().end())) : weights;
  }
};

MhaLayout layout_of(const Tensor& query, const Tensor& key, const Tensor& value,
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

// key_padding_mask (N, S) and attn_mask (L, S) or (N H, L, S) in their float form, summed
// into (N or 1, H or 1, L, S); undefined when neither is given.
Tensor merged_mask(const MhaCall& call, const MhaLayout& layout, int64_t heads) {
  if (call.is_causal && !call.attn_mask.defined())
    throw Error(
        "MultiheadAttention: Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
        "method `generate_square_subsequent_mask` to create this mask.");
  const Tensor padding = call.key_padding_mask.defined() ? padding_part(call.key_padding_mask, layout) : Tensor();
  const Tensor attn = call.attn_mask.defined() ? attn_part(call.attn_mask, layout, heads) : Tensor();
  if (padding.defined() && attn.defined()) return padding + attn;
  return padding.defined() ? padding : attn;
}

// Rows [part E, (part + 1) E) of in_proj: the query's (0), the key's (1) or the value's (2).
Tensor project(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t part, int64_t E) {
  return linear(x, narrow(weight, 0, part * E, E), bias.defined() ? narrow(bias, 0, part * E, E) : Tensor());
}

// (N, T, E) -> (N, H, T, D) and back.
Tensor split_heads(const Tensor& x, int64_t heads) {
  return permute(x.reshape({x.size(0), x.size(1), heads, x.size(2) / heads}), {0, 2, 1, 3});
}
Tensor merge_heads(const Tensor& x) {
  return permute(x, {0, 2, 1, 3}).reshape({x.size(0), x.size(2), x.size(1) * x.size(3)});
}

}  // namespace

// PyTorch's fast path, where SDPA would read q, k and v from one in_proj product: self-attention
// without weights, padding or dropout, causal by the is_causal hint (as PyTorch 2.x, which
// then drops attn_mask) or unmasked.
bool MultiheadAttention::takes_packed_path(const Tensor& query, const Tensor& key, const Tensor& value,
                                           const MhaCall& call) const {
  const bool self = query.impl_ptr() == key.impl_ptr() && key.impl_ptr() == value.impl_ptr();
  const bool masked = call.key_padding_mask.defined() || (call.attn_mask.defined() && !call.is_causal);
  return self && !call.need_weights && !masked && (!is_training() || options_.dropout() == 0.0);
}

MhaResult MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                      const MhaCall& call) {
  const MhaLayout layout = layout_of(query, key, value, options_);
  const int64_t E = options_.embed_dim, H = options_.num_heads;
  const Tensor mask = merged_mask(call, layout, H);  // (N or 1, H or 1, L, S), or undefined
  MhaResult result;
  Tensor heads;  // (N, L, E): the heads side by side
  if (takes_packed_path(query, key, value, call)) {
    heads =
        self_attention_packed(linear(layout.to_batch_first(query), in_proj_weight, in_proj_bias), H, call.is_causal);
  } else {
    const Tensor q = split_heads(project(layout.to_batch_first(query), in_proj_weight, in_proj_bias, 0, E), H);
    const Tensor k = split_heads(project(layout.to_batch_first(key), in_proj_weight, in_proj_bias, 1, E), H);
    const Tensor v = split_heads(project(layout.to_batch_first(value), in_proj_weight, in_proj_bias, 2, E), H);
    const AttentionOptions attention{.attn_mask = mask.defined() ? AttentionMask::additive(mask) : AttentionMask(),
                                     .dropout_p = is_training() ? options_.dropout() : 0.0};
    heads =
        merge_heads(scaled_dot_product_attention(q, k, v, attention, call.need_weights ? &result.weights : nullptr));
    if (call.need_weights)  // (N, H, L, S)
      result.weights = layout.weights_out(call.average_attn_weights ? mean(result.weights, {1}) : result.weights);
  }
  result.output = layout.from_batch_first(out_proj->forward(heads));
  return result;
}

Tensor MultiheadAttention::forward(const Tensor& x) { return forward(x, x, x, {.need_weights = false}).output; }

}  // namespace minidl::nn
