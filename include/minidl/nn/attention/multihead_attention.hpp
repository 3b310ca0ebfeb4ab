#pragma once
// MultiheadAttention, as torch.nn's: project query, key and value (in_proj_weight), attend in
// num_heads heads of embed_dim / num_heads channels, join the heads and project (out_proj).
//
//   nn::MultiheadAttention attention(nn::MultiheadAttentionOptions(64, 4).batch_first(true));
//   auto [y, weights] = attention.forward(x, x, x, {.key_padding_mask = AttentionMask::ignored(padding)});
//
// Its masks are minidl's AttentionMask; PyTorch's boolean masks for this module are
// AttentionMask::ignored (1 = the key is ignored). Self-attention (query, key and value the
// same tensor) without weights, masked by is_causal alone or not at all, runs the packed op
// (minidl/ops/packed_attention.hpp) on one in_proj product; everything else runs
// scaled_dot_product_attention, the weights included.
#include <cstdint>
#include <memory>

#include "minidl/nn/linear.hpp"
#include "minidl/nn/module.hpp"
#include "minidl/ops/attention.hpp"
#include "minidl/tensor/generator.hpp"

namespace minidl::nn {

/// nn.MultiheadAttention's arguments: MultiheadAttentionOptions(64, 4).dropout(0.1).
/// kdim and vdim (keys and values of another width) are not supported: both are embed_dim.
struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim(embed_dim), num_heads(num_heads) {}
  MultiheadAttentionOptions& dropout(double p) { return dropout_ = p, *this; }
  MultiheadAttentionOptions& bias(bool on) { return bias_ = on, *this; }
  MultiheadAttentionOptions& batch_first(bool on) { return batch_first_ = on, *this; }
  double dropout() const { return dropout_; }
  bool bias() const { return bias_; }
  bool batch_first() const { return batch_first_; }

  int64_t embed_dim;
  int64_t num_heads;

 private:
  double dropout_ = 0.0;      // dropout=0.0, on the attention weights in training
  bool bias_ = true;          // bias=True: in_proj_bias and out_proj.bias
  bool batch_first_ = false;  // batch_first=False: (L, N, E)
};

/// MultiheadAttention::forward's keyword arguments, PyTorch's defaults beside each.
struct MhaCall {
  AttentionMask key_padding_mask{};  // None; (N, S), or (S) for unbatched input
  bool need_weights = true;          // return the attention weights
  AttentionMask attn_mask{};         // None; (L, S) or (N * num_heads, L, S)
  bool average_attn_weights = true;  // weights averaged over heads: (N, L, S), else (N, H, L, S)
  bool is_causal = false;            // a hint that attn_mask is the causal mask; needs attn_mask
};

struct MhaResult {
  Tensor output;   // (L, N, E), (N, L, E) with batch_first, (L, E) unbatched
  Tensor weights;  // undefined unless need_weights; after dropout, as PyTorch's
};

/// out_proj's class: an nn.Linear under the name PyTorch prints.
class NonDynamicallyQuantizableLinear : public Linear {
 public:
  using Linear::Linear;
  std::string type_name() const override { return "NonDynamicallyQuantizableLinear"; }
};

class MultiheadAttention : public Module {
 public:
  /// Draws out_proj as nn.Linear does, then in_proj_weight xavier-uniform; both biases 0.
  explicit MultiheadAttention(const MultiheadAttentionOptions& options, Generator& gen = default_generator());
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, Generator& gen = default_generator())
      : MultiheadAttention(MultiheadAttentionOptions(embed_dim, num_heads), gen) {}

  /// query (L, N, E), key and value (S, N, E) (batch_first: (N, L, E), (N, S, E); unbatched:
  /// (L, E), (S, E)). A query whose every key is masked gives zeros, as PyTorch 2.5+'s SDPA
  /// (its need_weights path gives NaN).
  MhaResult forward(const Tensor& query, const Tensor& key, const Tensor& value, const MhaCall& call = {});
  /// Self-attention: forward(x, x, x) without weights, the output alone.
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "MultiheadAttention"; }
  const MultiheadAttentionOptions& options() const { return options_; }
  /// Redraws in_proj_weight (xavier_uniform_) and zeroes both biases, as PyTorch's
  /// _reset_parameters; out_proj.weight keeps its draw.
  void reset_parameters(Generator& gen = default_generator());

  Tensor in_proj_weight;  // (3 E, E): the query's rows, then the key's, then the value's
  Tensor in_proj_bias;    // (3 E), undefined when bias = false
  std::shared_ptr<NonDynamicallyQuantizableLinear> out_proj;  // (E, E)

 private:
  bool takes_packed_path(const Tensor& query, const Tensor& key, const Tensor& value, const MhaCall& call) const;
  MultiheadAttentionOptions options_;
};

}  // namespace minidl::nn
