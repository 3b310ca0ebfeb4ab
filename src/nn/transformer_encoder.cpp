#include <string>
#include <vector>

#include "minidl/nn/transformer.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::nn {
namespace {

// PyTorch's nn.ModuleList as far as the encoder needs it: named children "0", "1", ...
class ModuleList : public Module {
 public:
  void append(std::shared_ptr<Module> module) { register_module(std::to_string(size_++), std::move(module)); }
  Tensor forward(const Tensor& /*input*/) override {
    throw Error("ModuleList: it has no forward; call its modules one by one");
  }
  std::string type_name() const override { return "ModuleList"; }

 protected:
  // PyTorch 2.x's ModuleList repr: a run of children that print alike prints once,
  // "(0-5): 6 x TransformerEncoderLayer(...)", so a deep encoder fits on a screen.
  std::vector<std::string> child_lines() const override {
    std::vector<std::string> reprs;
    for (const auto& [name, child] : named_children()) reprs.push_back(child->repr());
    std::vector<std::string> lines;
    for (size_t start = 0; start < reprs.size();) {
      size_t end = start + 1;
      while (end < reprs.size() && reprs[end] == reprs[start]) ++end;
      const size_t count = end - start;
      lines.push_back(count == 1 ? child_line(std::to_string(start), reprs[start])
                                 : child_line(cat(start, "-", end - 1), cat(count, " x ", reprs[start])));
      start = end;
    }
    return lines;
  }

 private:
  int64_t size_ = 0;
};

}  // namespace

TransformerEncoder::TransformerEncoder(const TransformerEncoderLayerOptions& layer, int64_t num_layers,
                                       std::shared_ptr<LayerNorm> final_norm, Generator& gen)
    : norm(std::move(final_norm)) {
  if (num_layers < 1) throw Error(cat("TransformerEncoder: expected num_layers >= 1, got ", num_layers));
  auto list = register_module("layers", std::make_shared<ModuleList>());
  Generator copies_stream(0);  // the copies' own draws are overwritten: gen sees one layer's
  for (int64_t i = 0; i < num_layers; ++i) {
    layers.push_back(std::make_shared<TransformerEncoderLayer>(layer, i == 0 ? gen : copies_stream));
    if (i > 0) layers.back()->load_state_dict(layers.front()->state_dict());
    list->append(layers.back());
  }
  if (norm) register_module("norm", norm);
}

Tensor TransformerEncoder::forward(const Tensor& src, const MhaMask& mask, const MhaMask& src_key_padding_mask,
                                   bool is_causal) {
  Tensor x = src;
  for (const auto& layer : layers) x = layer->forward(x, mask, src_key_padding_mask, is_causal);
  return norm ? (*norm)(x) : x;
}

}  // namespace minidl::nn
