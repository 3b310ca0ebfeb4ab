#include "minidl/ops/packed_attention.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/exp_value.hpp"
#include "kernels/gemm.hpp"
#include "kernels/parallel_for.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/autograd/saved_tensor.hpp"
#include "minidl/ops/join.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {
namespace {

// The sizes of a packed self-attention, and where head h of batch row b lies. Queries and
// keys are the same positions (L = S) but in the cached call, whose keys are the cache's.
struct Heads {
  int64_t batch = 0, queries = 0, keys = 0, width = 0, count = 0, size = 0;  // B, L, S, C, H, D

  int64_t packed_row() const { return 3 * width; }  // floats between two positions of qkv
  // Offset of (b, first query, head h) in the queries' (B, L, 3C).
  int64_t query_at(int64_t b, int64_t h) const { return b * queries * packed_row() + h * size; }
  // Offset of (b, first key, head h) in the keys' (B, S, 3C); its value lies `width` further.
  int64_t key_at(int64_t b, int64_t h) const { return b * keys * packed_row() + width + h * size; }
  // Offset of (b, first query, head h)'s output in y (B, L, C).
  int64_t output_at(int64_t b, int64_t h) const { return b * queries * width + h * size; }
  // Offset of (b, h)'s (L, S) weights in (B, H, L, S).
  int64_t weights_at(int64_t b, int64_t h) const { return (b * count + h) * queries * keys; }
};

Heads heads_of(const Tensor& qkv, int64_t heads) {
  const bool packs = qkv.dim() == 3 && qkv.size(2) % 3 == 0;
  if (!packs || heads < 1 || (qkv.size(2) / 3) % heads != 0)
    throw Error(cat("self_attention_packed: expected qkv (B, T, 3C) with num_heads dividing C, got qkv of shape ",
                    to_string(qkv.shape()), " and num_heads ", heads));
  const int64_t width = qkv.size(2) / 3;
  return {qkv.size(0), qkv.size(1), qkv.size(1), width, heads, width / heads};
}

// f(b, h) for every (batch row, head), on OpenMP's threads when there is enough work: each
// head reads and writes only its own columns and weights, so the results do not depend on it.
template <typename F>
void for_each_head(const Heads& s, F f) {
  const int64_t work = s.queries * s.keys * s.size;  // multiply-adds of one head's product
  kernels::parallel_for(s.batch * s.count, kernels::grain_for(work), [&](int64_t i) { f(i / s.count, i % s.count); });
}

// Each row of the (L, S) scores becomes its softmax, in place, as softmax() computes it (exps
// and their sum in double); with is_causal query i, at position S - L + i, gives the keys
// after it weight 0. The exps (kernels/exp_value.hpp, within 1 ulp in double as libm's) run as
// one loop over the rows' unmasked scores packed end to end, where rows of a few keys would
// leave vector lanes idle. `shifted` is scratch of L * S doubles.
void softmax_rows(float* scores, int64_t queries, int64_t keys, bool is_causal, double* shifted) {
  const auto keys_of = [&](int64_t i) { return is_causal ? keys - queries + i + 1 : keys; };
  int64_t packed = 0;
  for (int64_t i = 0; i < queries; ++i) {
    const float* row = scores + i * keys;
    const int64_t seen = keys_of(i);
    float top = -INFINITY;
    for (int64_t j = 0; j < seen; ++j) top = std::max(top, row[j]);
    for (int64_t j = 0; j < seen; ++j) shifted[packed++] = double(row[j] - top);
  }
  for (int64_t k = 0; k < packed; ++k) shifted[k] = kernels::exp_nonpositive(shifted[k]);
  for (int64_t i = 0, at = 0; i < queries; at += keys_of(i++)) {
    float* row = scores + i * keys;
    const double* exps = shifted + at;
    const int64_t seen = keys_of(i);
    double total = 0.0;
    for (int64_t j = 0; j < seen; ++j) total += exps[j];
    const double scale = 1.0 / total;
    for (int64_t j = 0; j < seen; ++j) row[j] = float(double(float(exps[j])) * scale);
    for (int64_t j = seen; j < keys; ++j) row[j] = 0.0f;
  }
}

// The gradient of the scores from that of the weights, in place: ds_j = p_j (dp_j - sum_k dp_k p_k).
void softmax_backward_rows(float* grad, const float* weights, int64_t length) {
  for (int64_t i = 0; i < length; ++i) {
    float* g = grad + i * length;
    const float* p = weights + i * length;
    double dot = 0.0;
    for (int64_t j = 0; j < length; ++j) dot += double(g[j]) * double(p[j]);
    for (int64_t j = 0; j < length; ++j) g[j] = float(double(p[j]) * (double(g[j]) - dot));
  }
}

// dqkv from dy for every head (L = S = T): the weights' gradient dP = dY V^T, dV = P^T dY,
// then through the softmax, dQ = scale dS K and dK = scale dS^T Q.
Tensor backward(const Heads& s, const Tensor& qkv, const Tensor& weights, const Tensor& grad, float scale) {
  const int64_t T = s.queries, D = s.size, ld = s.packed_row(), C = s.width;
  Tensor dqkv = Tensor::empty(qkv.shape());             // (B, T, 3C): every column written below
  Tensor scores_grad = Tensor::empty(weights.shape());  // (B, H, T, T): dP, then dS, of each head
  for_each_head(s, [&](int64_t b, int64_t h) {
    const float* q = qkv.data() + s.query_at(b, h);
    const float *k = q + C, *v = q + 2 * C;
    const float* p = weights.data() + s.weights_at(b, h);
    const float* dy = grad.data() + s.output_at(b, h);
    float* ds = scores_grad.data() + s.weights_at(b, h);
    float* dq = dqkv.data() + s.query_at(b, h);
    kernels::gemm_strided(false, true, T, T, D, 1.0f, dy, C, v, ld, 0.0f, ds, T);
    kernels::gemm_strided(true, false, T, D, T, 1.0f, p, T, dy, C, 0.0f, dq + 2 * C, ld);
    softmax_backward_rows(ds, p, T);
    kernels::gemm_strided(false, false, T, D, T, scale, ds, T, k, ld, 0.0f, dq, ld);
    kernels::gemm_strided(true, false, T, D, T, scale, ds, T, q, ld, 0.0f, dq + C, ld);
  });
  return dqkv;
}

// Every head's softmax(scale Q K^T) V: the queries in qkv (B, L, 3C), the keys and values in
// kv (B, S, 3C) (qkv itself but in the cached call). Returns y (B, L, C); `weights` gets the
// softmax (B, H, L, S).
Tensor attend(const Heads& s, const Tensor& qkv, const Tensor& kv, bool is_causal, float scale, Tensor& weights) {
  const int64_t L = s.queries, S = s.keys, D = s.size, ld = s.packed_row(), C = s.width;
  Tensor out = Tensor::empty({s.batch, L, C});
  weights = Tensor::empty({s.batch, s.count, L, S});
  for_each_head(s, [&](int64_t b, int64_t h) {
    const float* q = qkv.data() + s.query_at(b, h);
    const float* k = kv.data() + s.key_at(b, h);
    float* p = weights.data() + s.weights_at(b, h);
    thread_local std::vector<double> scratch;  // grown once, not allocated and zeroed per head
    scratch.resize(std::max(scratch.size(), static_cast<size_t>(L * S)));
    kernels::gemm_strided(false, true, L, S, D, scale, q, ld, k, ld, 0.0f, p, S);  // scale Q K^T
    softmax_rows(p, L, S, is_causal, scratch.data());
    kernels::gemm_strided(false, false, L, D, S, 1.0f, p, S, k + C, ld, 0.0f, out.data() + s.output_at(b, h), C);
  });
  return out;
}

float scale_of(const Heads& s) { return float(1.0 / std::sqrt(double(s.size))); }

}  // namespace

Tensor self_attention_packed(const Tensor& qkv, int64_t heads, bool is_causal, Tensor* weights) {
  const Heads s = heads_of(qkv, heads);
  const float scale = scale_of(s);
  Tensor probabilities;  // (B, H, T, T)
  Tensor out = attend(s, qkv, qkv, is_causal, scale, probabilities);
  if (weights) *weights = probabilities;
  if (!needs_grad({qkv})) return out;
  const SavedTensor saved_qkv(qkv), saved_weights(probabilities);
  return record(out, "SelfAttentionPacked", {qkv}, [s, saved_qkv, saved_weights, scale](const Tensor& g) {
    return std::vector<Tensor>{backward(s, saved_qkv.unpack(), saved_weights.unpack(), g, scale)};
  });
}

Tensor self_attention_packed(const Tensor& qkv, int64_t heads, LayerCache& cache) {
  Heads s = heads_of(qkv, heads);
  if (needs_grad({qkv}))
    throw Error("self_attention_packed with a cache: generation records no graph; call it under NoGradGuard");
  if (cache.qkv.defined() && (cache.qkv.size(0) != qkv.size(0) || cache.qkv.size(2) != qkv.size(2)))
    throw Error(cat("self_attention_packed: expected qkv (B, L, 3C) with the cache's B and 3C, got qkv of shape ",
                    to_string(qkv.shape()), " and a cache of shape ", to_string(cache.qkv.shape())));
  cache.qkv = cache.qkv.defined() ? cat({cache.qkv, qkv}, 1) : qkv;  // (B, S, 3C)
  s.keys = cache.length();
  Tensor weights;
  return attend(s, qkv, cache.qkv, /*is_causal=*/true, scale_of(s), weights);
}

}  // namespace minidl
