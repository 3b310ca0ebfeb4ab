#include "minidl/nn/transformer.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {

TransformerEncoder::TransformerEncoder(const TransformerEncoderLayerOptions& layer, int64_t num_layers,
                                       std::shared_ptr<LayerNorm> final_norm, Generator& gen)
    : norm(std::move(final_norm)) {
  if (num_layers < 1) throw Error(cat("TransformerEncoder: expected num_layers >= 1, got ", num_layers));
  layers = register_module("layers", std::make_shared<ModuleList>());
  Generator copies_stream(0);  // the copies' own draws are overwritten: gen sees one layer's
  const auto first = layers->append(std::make_shared<TransformerEncoderLayer>(layer, gen));
  for (int64_t i = 1; i < num_layers; ++i)
    layers->append(std::make_shared<TransformerEncoderLayer>(layer, copies_stream))
        ->load_state_dict(first->state_dict());
  if (norm) register_module("norm", norm);
}

Tensor TransformerEncoder::forward(const Tensor& src, const AttentionMask& mask,
                                   const AttentionMask& src_key_padding_mask, bool is_causal) {
  Tensor x = src;
  for (int64_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerEncoderLayer>(i).forward(x, mask, src_key_padding_mask, is_causal);
  return norm ? (*norm)(x) : x;
}

}  // namespace minidl::nn
