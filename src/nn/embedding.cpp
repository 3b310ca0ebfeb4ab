#include "minidl/nn/embedding.hpp"

#include <algorithm>

#include "minidl/nn/init.hpp"
#include "minidl/ops/embedding.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {
namespace {

// PyTorch's assertion, with the bounds and the value.
std::optional<int64_t> checked_padding_idx(const EmbeddingOptions& options) {
  const std::optional<int64_t> row = options.padding_idx();
  const int64_t v = options.num_embeddings;
  if (!row) return row;
  if (*row < -v || *row >= v)
    throw Error(cat("Embedding: padding_idx must be within num_embeddings: expected ", -v, " <= padding_idx < ", v,
                    ", got ", *row));
  return *row < 0 ? *row + v : *row;
}

}  // namespace

Embedding::Embedding(const EmbeddingOptions& options, Generator& gen)
    : num_embeddings_(options.num_embeddings), embedding_dim_(options.embedding_dim) {
  if (num_embeddings_ < 0 || embedding_dim_ < 0)
    throw Error(cat("Embedding: expected non-negative num_embeddings and embedding_dim, got num_embeddings=",
                    num_embeddings_, ", embedding_dim=", embedding_dim_));
  padding_idx_ = checked_padding_idx(options);
  weight = register_parameter("weight", Tensor::empty({num_embeddings_, embedding_dim_}));
  reset_parameters(gen);
}

void Embedding::reset_parameters(Generator& gen) {
  init::normal_(weight, 0.0, 1.0, gen);
  if (!padding_idx_) return;
  // Outside any graph, as the init itself: a write through data(), marked as one.
  std::fill_n(weight.data() + *padding_idx_ * embedding_dim_, embedding_dim_, 0.0f);
  weight.bump_version();
}

Tensor Embedding::forward(const Tensor& indices) { return embedding(indices, weight, padding_idx_); }

std::string Embedding::extra_repr() const {
  std::string text = cat(num_embeddings_, ", ", embedding_dim_);
  if (padding_idx_) text += cat(", padding_idx=", *padding_idx_);
  return text;
}

}  // namespace minidl::nn
