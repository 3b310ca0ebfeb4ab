#include "minidl/nn/attention/multihead_attention.hpp"

#include "minidl/nn/init.hpp"
#include "minidl/ops/activation.hpp"
#include "minidl/ops/attention.hpp"
#include "minidl/ops/matmul.hpp"
#include "minidl/ops/packed_attention.hpp"
#include "minidl/ops/reduce.hpp"
#include "minidl/ops/shape_ops.hpp"
#include "minidl/ops/slicing.hpp"
#include "minidl/tensor/error.hpp"
#include "nn/attention/mha_layout.hpp"

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
  const MhaLayout layout = MhaLayout::of(query, key, value, options_);
  const int64_t E = options_.embed_dim, H = options_.num_heads;
  const Tensor mask = layout.merged_mask(call, H);  // (N or 1, H or 1, L, S), or undefined
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
