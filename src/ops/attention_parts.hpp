#pragma once
// The steps of scaled_dot_product_attention that nn::MultiheadAttention also takes on its
// own (it returns the weights, which SDPA does not).
#include "minidl/ops/attention.hpp"

namespace minidl {

/// The scores q k^T * scale + mask, shape (..., L, S), as scaled_dot_product_attention forms
/// them before the softmax, its checks included; `caller` opens the error messages.
Tensor attention_scores(const Tensor& query, const Tensor& key, const AttentionOptions& options,
                        const char* caller = "scaled_dot_product_attention");

/// softmax over the last dim, where a row whose entries are all -inf gives zeros and no NaN
/// gradient: PyTorch 2.5+'s _safe_softmax, which SDPA uses.
Tensor safe_softmax(const Tensor& scores);

}  // namespace minidl
