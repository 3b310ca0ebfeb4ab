#include "minidl/ops/embedding.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/parallel_for.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl {
namespace {

constexpr int64_t kNoPadding = -1;

// Checks weight and padding_idx; returns the padding row in [0, V), or kNoPadding.
int64_t check_weight(const Tensor& weight, std::optional<int64_t> padding_idx) {
  if (weight.dim() != 2)
    throw Error(
        cat("embedding: expected weight of shape [num_embeddings, embedding_dim], got ", to_string(weight.shape())));
  const int64_t v = weight.size(0);
  if (!padding_idx) return kNoPadding;
  if (*padding_idx < -v || *padding_idx >= v)
    throw Error(cat("embedding: padding_idx must be within num_embeddings: expected ", -v, " <= padding_idx < ", v,
                    " for weight of shape ", to_string(weight.shape()), ", got ", *padding_idx));
  return *padding_idx < 0 ? *padding_idx + v : *padding_idx;
}

// Each index as a row of weight, in order; throws on the first that is not an integer in [0, V).
std::vector<int64_t> read_rows(const Tensor& indices, const Tensor& weight) {
  const int64_t v = weight.size(0);
  const float* index = indices.data();
  std::vector<int64_t> rows(size_t(indices.numel()));
  for (int64_t i = 0; i < indices.numel(); ++i) {
    const float x = index[i];
    const bool integer = std::isfinite(x) && x == std::floor(x);
    if (!integer || x < 0.0f || double(x) >= double(v))
      throw Error(cat("embedding: index ", x, " at position ", i, " of indices of shape ", to_string(indices.shape()),
                      integer ? " is out of range" : " is not an integer", " (expected an integer in [0, ", v,
                      ") for weight of shape ", to_string(weight.shape()), ")"));
    rows[size_t(i)] = int64_t(x);
  }
  return rows;
}

// out (N, D): row i is weight's row rows[i].
void gather_rows(float* out, const float* weight, const std::vector<int64_t>& rows, int64_t d) {
  kernels::parallel_for(int64_t(rows.size()), kernels::grain_for(d),
                        [&](int64_t i) { std::copy_n(weight + rows[size_t(i)] * d, d, out + i * d); });
}

// dweight (V, D) += the rows of grad (N, D), each into its row rows[i], in index order so
// a row looked up twice sums the same way on every run; the padding row gets nothing.
void scatter_add_rows(float* dweight, const float* grad, const std::vector<int64_t>& rows, int64_t d,
                      int64_t padding_row) {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] == padding_row) continue;
    float* target = dweight + rows[i] * d;        // (D)
    const float* source = grad + int64_t(i) * d;  // (D)
    for (int64_t j = 0; j < d; ++j) target[j] += source[j];
  }
}

}  // namespace

Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx) {
  const int64_t padding_row = check_weight(weight, padding_idx);
  std::vector<int64_t> rows = read_rows(indices, weight);
  const int64_t d = weight.size(1);
  Shape shape = indices.shape();
  shape.push_back(d);
  Tensor out = Tensor::empty(shape);  // (*indices.shape, D)
  gather_rows(out.data(), weight.data(), rows, d);
  if (!needs_grad({weight})) return out;
  // The rows are a copy: a later write into indices cannot change the backward.
  return record(out, "Embedding", {weight},
                [rows = std::move(rows), weight_shape = weight.shape(), padding_row](const Tensor& g) {
                  Tensor dweight = Tensor::zeros(weight_shape);  // (V, D): rows never looked up get 0
                  scatter_add_rows(dweight.data(), g.data(), rows, weight_shape[1], padding_row);
                  return std::vector<Tensor>{dweight};
                });
}

}  // namespace minidl
