#pragma once
// A stand-in for the library's embedding (minidl/ops/embedding.hpp and nn::Embedding, being
// written beside this program), with the same signature: rows of `weight` picked by float
// indices, the gradient scatter-added into `weight` (select_rows). When the library's lands,
// this file and embedding.cpp go and the includes name the library's header.
#include <cstdint>
#include <optional>
#include <string>

#include "minidl/minidl.hpp"

namespace minidl::charlm {

/// weight (V, D) and indices of any shape holding integers 0..V-1 -> (*indices.shape, D).
/// The padding_idx row (negative: counted from V) gets no gradient.
Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx = std::nullopt);

/// nn.Embedding(num_embeddings, embedding_dim): weight drawn N(0, 1) from gen.
class Embedding : public nn::Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, Generator& gen = default_generator());
  Tensor forward(const Tensor& indices) override { return embedding(indices, weight); }
  std::string type_name() const override { return "Embedding"; }
  std::string extra_repr() const override;

  Tensor weight;  // (num_embeddings, embedding_dim)
};

}  // namespace minidl::charlm
