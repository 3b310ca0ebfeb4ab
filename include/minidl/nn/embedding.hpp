#pragma once
// Embedding: a lookup table of num_embeddings rows of embedding_dim, PyTorch's nn.Embedding.
// Input: integer indices stored as float32 (minidl/ops/embedding.hpp).
#include <cstdint>
#include <optional>

#include "minidl/nn/module.hpp"
#include "minidl/tensor/generator.hpp"

namespace minidl::nn {

/// nn.Embedding's arguments: EmbeddingOptions(27, 64).padding_idx(0), as
/// torch::nn::EmbeddingOptions.
struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings(num_embeddings), embedding_dim(embedding_dim) {}
  /// The row that starts at zero and never gets a gradient; negative counts from num_embeddings.
  EmbeddingOptions& padding_idx(int64_t row) {
    padding_idx_ = row;
    return *this;
  }
  std::optional<int64_t> padding_idx() const { return padding_idx_; }

  int64_t num_embeddings;
  int64_t embedding_dim;

 private:
  std::optional<int64_t> padding_idx_ = std::nullopt;  // padding_idx=None
};

class Embedding : public Module {
 public:
  /// weight (num_embeddings, embedding_dim) drawn N(0, 1) from gen row-major
  /// (nn::init::normal_), then the padding_idx row set to zero, as nn.Embedding. A negative
  /// padding_idx is stored as padding_idx + num_embeddings, as PyTorch stores it.
  explicit Embedding(const EmbeddingOptions& options, Generator& gen = default_generator());
  /// Embedding(num_embeddings, embedding_dim), no padding row.
  Embedding(int64_t num_embeddings, int64_t embedding_dim, Generator& gen = default_generator())
      : Embedding(EmbeddingOptions(num_embeddings, embedding_dim), gen) {}

  /// Indices of any shape -> (*indices.shape, embedding_dim).
  Tensor forward(const Tensor& indices) override;
  std::string type_name() const override { return "Embedding"; }
  /// "27, 64", then ", padding_idx=0" when there is one.
  std::string extra_repr() const override;

  /// Redraws weight in place and zeroes the padding row again, as the constructor does.
  void reset_parameters(Generator& gen = default_generator());

  int64_t num_embeddings() const { return num_embeddings_; }
  int64_t embedding_dim() const { return embedding_dim_; }
  /// In [0, num_embeddings) when there is one.
  std::optional<int64_t> padding_idx() const { return padding_idx_; }

  Tensor weight;  // (num_embeddings, embedding_dim)

 private:
  int64_t num_embeddings_;
  int64_t embedding_dim_;
  std::optional<int64_t> padding_idx_;
};

}  // namespace minidl::nn
