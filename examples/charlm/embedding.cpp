#include "embedding.hpp"

#include <cmath>

namespace minidl::charlm {

namespace {

// weight with its padding row cut out of the graph: that row's gradient is dropped.
Tensor without_padding_gradient(const Tensor& weight, int64_t padding) {
  const int64_t rows = weight.size(0);
  std::vector<Tensor> parts;
  if (padding > 0) parts.push_back(narrow(weight, 0, 0, padding));
  parts.push_back(narrow(weight, 0, padding, 1).detach());
  if (padding + 1 < rows) parts.push_back(narrow(weight, 0, padding + 1, rows - padding - 1));
  return cat(parts, 0);
}

}  // namespace

Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx) {
  if (weight.dim() != 2) throw Error(cat("embedding: expected a 2-D weight (V, D), got ", to_string(weight.shape())));
  const int64_t rows = weight.size(0);
  std::vector<int64_t> picks(size_t(indices.numel()));
  for (size_t i = 0; i < picks.size(); ++i) {
    const float index = indices.data()[i];
    if (index != std::floor(index) || index < 0 || index >= float(rows))
      throw Error(cat("embedding: index ", index, " at flat position ", i, " is not an integer in 0..", rows - 1));
    picks[i] = int64_t(index);
  }
  const Tensor source =
      padding_idx ? without_padding_gradient(weight, *padding_idx < 0 ? *padding_idx + rows : *padding_idx) : weight;
  Shape shape = indices.shape();
  shape.push_back(weight.size(1));
  return select_rows(source, picks).reshape(shape);
}

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, Generator& gen) {
  weight = register_parameter("weight", Tensor::empty({num_embeddings, embedding_dim}));
  nn::init::normal_(weight, 0.0, 1.0, gen);
}

std::string Embedding::extra_repr() const { return cat(weight.size(0), ", ", weight.size(1)); }

}  // namespace minidl::charlm
