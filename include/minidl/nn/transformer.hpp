#pragma once
// The transformer encoder, as torch.nn's: TransformerEncoderLayer (self-attention and a
// feed-forward block, each with a residual and a LayerNorm, post-norm by default or pre-norm
// with norm_first), TransformerEncoder (a stack of them and an optional final norm), and the
// causal mask generate_square_subsequent_mask.
//
//   nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(64, 4).norm_first(true));
//   Tensor y = layer.forward(x, AttentionMask::additive(nn::generate_square_subsequent_mask(T)));
#include <cstdint>
#include <memory>
#include <string>

#include "minidl/nn/attention/multihead_attention.hpp"
#include "minidl/nn/containers.hpp"
#include "minidl/nn/dropout.hpp"
#include "minidl/nn/linear.hpp"
#include "minidl/nn/norm/layer_norm.hpp"

namespace minidl::nn {

/// nn.Transformer.generate_square_subsequent_mask(sz): a float (sz, sz) mask, -inf above the
/// diagonal (the future) and 0 elsewhere, for AttentionMask::additive.
Tensor generate_square_subsequent_mask(int64_t sz);

/// nn.TransformerEncoderLayer's arguments, PyTorch's defaults beside each.
struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead) : d_model(d_model), nhead(nhead) {}
  TransformerEncoderLayerOptions& dim_feedforward(int64_t n) { return dim_feedforward_ = n, *this; }
  TransformerEncoderLayerOptions& dropout(double p) { return dropout_ = p, *this; }
  TransformerEncoderLayerOptions& activation(std::string name) { return activation_ = std::move(name), *this; }
  TransformerEncoderLayerOptions& layer_norm_eps(double eps) { return layer_norm_eps_ = eps, *this; }
  TransformerEncoderLayerOptions& batch_first(bool on) { return batch_first_ = on, *this; }
  TransformerEncoderLayerOptions& norm_first(bool on) { return norm_first_ = on, *this; }
  TransformerEncoderLayerOptions& bias(bool on) { return bias_ = on, *this; }
  int64_t dim_feedforward() const { return dim_feedforward_; }
  double dropout() const { return dropout_; }
  const std::string& activation() const { return activation_; }
  double layer_norm_eps() const { return layer_norm_eps_; }
  bool batch_first() const { return batch_first_; }
  bool norm_first() const { return norm_first_; }
  bool bias() const { return bias_; }

  int64_t d_model;
  int64_t nhead;

 private:
  int64_t dim_feedforward_ = 2048;
  double dropout_ = 0.1;
  std::string activation_ = "relu";  // "relu" or "gelu"
  double layer_norm_eps_ = 1e-5;
  bool batch_first_ = false;  // (S, N, E); true: (N, S, E)
  bool norm_first_ = false;   // post-norm; true: pre-norm
  bool bias_ = true;          // 2.1+: biases of the Linears, the attention and the LayerNorms
};

class TransformerEncoderLayer : public Module {
 public:
  /// Children in PyTorch's order and names: self_attn, linear1, dropout, linear2, norm1,
  /// norm2, dropout1, dropout2; each drawn as PyTorch's from gen.
  explicit TransformerEncoderLayer(const TransformerEncoderLayerOptions& options, Generator& gen = default_generator());

  /// post-norm: x = norm1(x + sa(x)); x = norm2(x + ff(x)). norm_first: x = x + sa(norm1(x));
  /// x = x + ff(norm2(x)). src_mask (S, S) or (N nhead, S, S), src_key_padding_mask (N, S): as
  /// MultiheadAttention's (AttentionMask::ignored: 1 = ignored). is_causal: a hint that src_mask is causal.
  Tensor forward(const Tensor& src, const AttentionMask& src_mask, const AttentionMask& src_key_padding_mask = {},
                 bool is_causal = false);
  Tensor forward(const Tensor& src) override { return forward(src, AttentionMask()); }
  std::string type_name() const override { return "TransformerEncoderLayer"; }
  const TransformerEncoderLayerOptions& options() const { return options_; }

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2;
  std::shared_ptr<LayerNorm> norm1, norm2;

 private:
  Tensor self_attention_block(const Tensor& x, const AttentionMask& mask, const AttentionMask& padding, bool is_causal);
  Tensor feed_forward_block(const Tensor& x);
  TransformerEncoderLayerOptions options_;
};

class TransformerEncoder : public Module {
 public:
  /// num_layers layers under "layers.0", "layers.1", ... and the optional final `norm`. As
  /// PyTorch's deep copies, every layer starts with the first one's weights: only the first
  /// draws from gen.
  TransformerEncoder(const TransformerEncoderLayerOptions& layer, int64_t num_layers,
                     std::shared_ptr<LayerNorm> norm = nullptr, Generator& gen = default_generator());

  /// Each layer with the same masks, then norm.
  Tensor forward(const Tensor& src, const AttentionMask& mask, const AttentionMask& src_key_padding_mask = {},
                 bool is_causal = false);
  Tensor forward(const Tensor& src) override { return forward(src, AttentionMask()); }
  std::string type_name() const override { return "TransformerEncoder"; }

  std::shared_ptr<ModuleList> layers;  // of TransformerEncoderLayer
  std::shared_ptr<LayerNorm> norm;     // null without a final norm
};

}  // namespace minidl::nn
