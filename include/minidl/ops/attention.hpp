#pragma once
// scaled_dot_product_attention, as torch.nn.functional's: softmax(q k^T * scale + mask) v,
// written out with the tensor ops (matmul, masked_fill, softmax, dropout); autograd runs
// through them. Self-attention on a packed q|k|v projection has one op of its own that
// copies nothing: minidl/ops/packed_attention.hpp.
//
//   Tensor y = scaled_dot_product_attention(q, k, v, {.is_causal = true});  // (B, H, T, D)
#include <optional>

#include "minidl/tensor/generator.hpp"
#include "minidl/tensor/tensor.hpp"

namespace minidl {

/// The attention mask of every attention call (SDPA, nn::MultiheadAttention, the transformer
/// layers), its kind spelled out: PyTorch tells a boolean mask from a float one by dtype, and
/// minidl's tensors are all float32. PyTorch's two boolean conventions each have their factory.
class AttentionMask {
 public:
  enum class Kind { none, boolean, ignored, additive };

  AttentionMask() = default;  // no mask (attn_mask=None)
  /// SDPA's boolean mask: 1 (PyTorch's true) where the query attends to the key, 0 where it
  /// does not. Entries other than 0 and 1 are an error.
  static AttentionMask boolean(Tensor keep) { return {Kind::boolean, std::move(keep)}; }
  /// nn.MultiheadAttention's boolean masks (key_padding_mask, attn_mask): 1 (PyTorch's true)
  /// where the key is IGNORED, the opposite of boolean(). Entries other than 0 and 1 are an error.
  static AttentionMask ignored(Tensor ignore) { return {Kind::ignored, std::move(ignore)}; }
  /// A float mask added to the scores: 0 keeps a key, -inf removes it, anything else biases it.
  static AttentionMask additive(Tensor bias) { return {Kind::additive, std::move(bias)}; }

  Kind kind() const { return kind_; }
  bool defined() const { return kind_ != Kind::none; }
  const Tensor& tensor() const { return tensor_; }
  /// The mask as added to the scores (PyTorch's F._canonical_mask): a boolean mask becomes 0
  /// where kept and -inf where not (no gradient); an additive one is itself; no mask is an
  /// undefined Tensor.
  Tensor as_additive() const;

 private:
  AttentionMask(Kind kind, Tensor tensor) : kind_(kind), tensor_(std::move(tensor)) {}
  Kind kind_ = Kind::none;
  Tensor tensor_;
};

/// F.scaled_dot_product_attention's keyword arguments, PyTorch's defaults beside each.
struct AttentionOptions {
  AttentionMask attn_mask{};       // attn_mask=None; broadcasts to (..., L, S)
  double dropout_p = 0.0;          // dropout_p=0.0: applied to the weights whenever > 0 (no training flag)
  bool is_causal = false;          // is_causal=False: the lower triangle of (L, S), aligned top-left
  std::optional<double> scale{};   // scale=None: 1 / sqrt(E)
  Generator* generator = nullptr;  // dropout's stream; null: default_generator()
};

/// F.scaled_dot_product_attention: query (..., L, E), key (..., S, E), value (..., S, Ev) ->
/// (..., L, Ev); batch dims broadcast as matmul's. A row whose every key is masked gives
/// zeros, as PyTorch 2.5+ (1.13 to 2.4 give NaN). is_causal with an attn_mask, a mask that
/// does not broadcast to (..., L, S) and mismatched E or S are errors naming the shapes.
/// `weights`, when given, receives the attention weights (..., L, S) as they multiply value
/// (after dropout): nn::MultiheadAttention's need_weights.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const AttentionOptions& options = {}, Tensor* weights = nullptr);

}  // namespace minidl
