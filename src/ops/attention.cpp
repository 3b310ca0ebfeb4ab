#include "minidl/ops/attention.hpp"

#include <cmath>
#include <limits>

#include "minidl/ops/activation.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/masking.hpp"
#include "minidl/ops/matmul.hpp"
#include "minidl/ops/shape_ops.hpp"
#include "minidl/ops/softmax.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {

Tensor AttentionMask::as_additive() const {
  if (kind_ != Kind::boolean && kind_ != Kind::ignored) return tensor_;
  const float kept_at = kind_ == Kind::boolean ? 1.0f : 0.0f;
  Tensor out = Tensor::empty(tensor_.shape());
  const float* mask = tensor_.data();
  float* bias = out.data();  // 0 where kept, -inf where masked
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (mask[i] != 0.0f && mask[i] != 1.0f)
      throw Error(cat("attention: expected a boolean mask of 0s and 1s (minidl's masks are float32, 1 for true = ",
                      kind_ == Kind::boolean ? "takes part" : "ignored", "), got ", mask[i], " at flat index ", i,
                      " of the mask of shape ", to_string(tensor_.shape())));
    bias[i] = mask[i] == kept_at ? 0.0f : -std::numeric_limits<float>::infinity();
  }
  return out;
}

namespace {

void check_operands(const Tensor& q, const Tensor& k) {
  if (q.dim() < 2 || k.dim() < 2 || q.size(-1) != k.size(-1))
    throw Error(
        cat("scaled_dot_product_attention: expected query (..., L, E) and key (..., S, E) with the same E, got query ",
            to_string(q.shape()), " and key ", to_string(k.shape())));
}

// The mask must broadcast to the scores' shape itself, not merely with it.
void check_mask_shape(const Tensor& mask, const Shape& scores) {
  bool fits = mask.dim() <= int64_t(scores.size());
  if (fits) {
    try {
      fits = broadcast_shapes(mask.shape(), scores) == scores;
    } catch (const Error&) {
      fits = false;
    }
  }
  if (!fits)
    throw Error(cat("scaled_dot_product_attention: expected attn_mask broadcastable to the scores' shape ",
                    to_string(scores), " (..., L, S), got ", to_string(mask.shape())));
}

// is_causal: query i attends to keys 0..i, the lower triangle of (L, S) aligned top-left.
AttentionMask causal_mask(int64_t target_length, int64_t source_length) {
  return AttentionMask::boolean(tril(Tensor::ones({target_length, source_length})));
}

// (..., L, 1): 1 where every score of the row is -inf.
Tensor fully_masked_rows(const Tensor& scores, bool& any) {
  const int64_t cols = scores.size(-1), rows = cols == 0 ? 0 : scores.numel() / cols;
  Shape shape = scores.shape();
  shape.back() = 1;
  Tensor dead = Tensor::zeros(shape);
  const float* s = scores.data();
  any = false;
  for (int64_t r = 0; r < rows; ++r) {
    bool all_masked = true;
    for (int64_t c = 0; c < cols && all_masked; ++c) all_masked = std::isinf(s[r * cols + c]) && s[r * cols + c] < 0;
    if (all_masked) dead.data()[r] = 1.0f, any = true;
  }
  return dead;
}

// The scores q k^T * scale + mask, (..., L, S), with their checks.
Tensor attention_scores(const Tensor& query, const Tensor& key, const AttentionOptions& options) {
  check_operands(query, key);
  if (options.is_causal && options.attn_mask.defined())
    throw Error("scaled_dot_product_attention: explicit attn_mask should not be set when is_causal=True");
  const double scale = options.scale.value_or(1.0 / std::sqrt(double(query.size(-1))));
  Tensor scores = matmul(query, transpose(key, -2, -1)) * float(scale);  // (..., L, S)
  const AttentionMask mask = options.is_causal ? causal_mask(query.size(-2), key.size(-2)) : options.attn_mask;
  if (!mask.defined()) return scores;
  check_mask_shape(mask.tensor(), scores.shape());
  return scores + mask.as_additive();
}

// softmax over the last dim, where a row whose entries are all -inf gives zeros and no NaN
// gradient: PyTorch 2.5+'s _safe_softmax, which SDPA uses.
Tensor safe_softmax(const Tensor& scores) {
  bool any_dead = false;
  const Tensor dead = fully_masked_rows(scores, any_dead);
  if (!any_dead) return softmax(scores, -1);
  // The dead rows' scores become 0 before the softmax (so no NaN reaches the backward) and
  // their weights 0 after it.
  return masked_fill(softmax(masked_fill(scores, dead, 0.0f), -1), dead, 0.0f);
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const AttentionOptions& options, Tensor* weights_out) {
  if (value.dim() < 2 || value.size(-2) != key.size(-2))
    throw Error(
        cat("scaled_dot_product_attention: expected key (..., S, E) and value (..., S, Ev) with the same S, got "
            "key ",
            to_string(key.shape()), " and value ", to_string(value.shape())));
  Tensor weights = safe_softmax(attention_scores(query, key, options));  // (..., L, S)
  if (options.dropout_p > 0.0)
    weights = dropout(weights, options.dropout_p, true, options.generator ? *options.generator : default_generator());
  if (weights_out) *weights_out = weights;
  return matmul(weights, value);  // (..., L, Ev)
}

}  // namespace minidl
