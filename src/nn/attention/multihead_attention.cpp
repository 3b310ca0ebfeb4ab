#include "minidl/nn/attention/multihead_attention.hpp"

#include <cmath>
#include <limits>

#include "minidl/nn/init.hpp"
#include "minidl/ops/activation.hpp"
#include "minidl/ops/attention.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/matmul.hpp"
#include "minidl/ops/reduce.hpp"
#include "minidl/ops/shape_ops.hpp"
#include "minidl/ops/slicing.hpp"
#include "minidl/ops/softmax.hpp"
#include "minidl/tensor/error.hpp"
#include "nn/attention/mha_layout.hpp"
#include "ops/attention_parts.hpp"

namespace minidl::nn {

Tensor MhaMask::as_additive() const {
  if (!is_boolean_) return tensor_;
  Tensor out = Tensor::empty(tensor_.shape());
  const float* ignore = tensor_.data();
  float* bias = out.data();  // -inf where ignored, 0 where attended
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (ignore[i] != 0.0f && ignore[i] != 1.0f)
      throw Error(cat("MultiheadAttention: expected a boolean mask of 0s and 1s (1 = ignored, PyTorch's true), got ",
                      ignore[i], " at flat index ", i, " of the mask of shape ", to_string(tensor_.shape())));
    bias[i] = ignore[i] != 0.0f ? -std::numeric_limits<float>::infinity() : 0.0f;
  }
  return out;
}

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
Tensor join_heads(const Tensor& x) {
  return permute(x, {0, 2, 1, 3}).reshape({x.size(0), x.size(2), x.size(1) * x.size(3)});
}

}  // namespace

MhaResult MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                      const MhaCall& call) {
  const MhaLayout layout = MhaLayout::of(query, key, value, options_);
  const int64_t E = options_.embed_dim, H = options_.num_heads;
  const Tensor mask = layout.merged_mask(call, H);  // (N or 1, H or 1, L, S), or undefined
  const Tensor q = split_heads(project(layout.to_batch_first(query), in_proj_weight, in_proj_bias, 0, E), H);
  const Tensor k = split_heads(project(layout.to_batch_first(key), in_proj_weight, in_proj_bias, 1, E), H);
  const Tensor v = split_heads(project(layout.to_batch_first(value), in_proj_weight, in_proj_bias, 2, E), H);
  const double p = is_training() ? options_.dropout() : 0.0;
  const AttentionOptions attention{.attn_mask = mask.defined() ? AttentionMask::additive(mask) : AttentionMask(),
                                   .dropout_p = p};
  MhaResult result;
  Tensor heads;  // (N, H, L, D)
  if (call.need_weights) {
    // PyTorch 2.x's explicit path: softmax (NaN on a row with every key masked), dropout.
    result.weights = softmax(attention_scores(q, k, attention, "MultiheadAttention"), -1);  // (N, H, L, S)
    if (p > 0.0) result.weights = dropout(result.weights, p, true);
    heads = matmul(result.weights, v);
    result.weights = layout.weights_out(call.average_attn_weights ? mean(result.weights, {1}) : result.weights);
  } else {
    heads = scaled_dot_product_attention(q, k, v, attention);
  }
  result.output = layout.from_batch_first(out_proj->forward(join_heads(heads)));
  return result;
}

Tensor MultiheadAttention::forward(const Tensor& x) { return forward(x, x, x, {.need_weights = false}).output; }

}  // namespace minidl::nn
