#include <cmath>

#include "minidl/nn/transformer.hpp"
#include "minidl/ops/activation.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/masking.hpp"
#include "minidl/ops/unary.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

Tensor generate_square_subsequent_mask(int64_t sz) {
  if (sz < 0) throw Error(cat("generate_square_subsequent_mask: expected a size >= 0, got ", sz));
  return masked_fill(Tensor::zeros({sz, sz}), triu(Tensor::ones({sz, sz}), 1), -INFINITY);
}

namespace {

const TransformerEncoderLayerOptions& checked(const TransformerEncoderLayerOptions& options) {
  if (options.activation() != "relu" && options.activation() != "gelu")
    throw Error(cat("TransformerEncoderLayer: activation should be relu/gelu, not ", options.activation()));
  return options;
}

}  // namespace

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerEncoderLayerOptions& options, Generator& gen)
    : options_(checked(options)) {
  const int64_t d = options.d_model, ff = options.dim_feedforward();
  const bool bias = options.bias();
  self_attn =
      register_module("self_attn", std::make_shared<MultiheadAttention>(MultiheadAttentionOptions(d, options.nhead)
                                                                            .dropout(options.dropout())
                                                                            .bias(bias)
                                                                            .batch_first(options.batch_first()),
                                                                        gen));
  linear1 = register_module("linear1", std::make_shared<Linear>(LinearOptions(d, ff).bias(bias), gen));
  dropout = register_module("dropout", std::make_shared<Dropout>(options.dropout()));
  linear2 = register_module("linear2", std::make_shared<Linear>(LinearOptions(ff, d).bias(bias), gen));
  const LayerNormOptions norm{.normalized_shape = {d}, .eps = options.layer_norm_eps(), .bias = bias};
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(norm));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(norm));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(options.dropout()));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(options.dropout()));
}

Tensor TransformerEncoderLayer::self_attention_block(const Tensor& x, const AttentionMask& mask,
                                                     const AttentionMask& padding, bool is_causal) {
  const MhaCall call{.key_padding_mask = padding, .need_weights = false, .attn_mask = mask, .is_causal = is_causal};
  return (*dropout1)(self_attn->forward(x, x, x, call).output);
}

Tensor TransformerEncoderLayer::feed_forward_block(const Tensor& x) {
  const Tensor hidden = (*linear1)(x);
  return (*dropout2)((*linear2)((*dropout)(options_.activation() == "gelu" ? gelu(hidden) : relu(hidden))));
}

Tensor TransformerEncoderLayer::forward(const Tensor& src, const AttentionMask& src_mask,
                                        const AttentionMask& src_key_padding_mask, bool is_causal) {
  Tensor x = src;
  if (options_.norm_first()) {
    x = x + self_attention_block((*norm1)(x), src_mask, src_key_padding_mask, is_causal);
    return x + feed_forward_block((*norm2)(x));
  }
  x = (*norm1)(x + self_attention_block(x, src_mask, src_key_padding_mask, is_causal));
  return (*norm2)(x + feed_forward_block(x));
}

}  // namespace minidl::nn
