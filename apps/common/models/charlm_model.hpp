#pragma once
// charlm's model: makemore's Transformer (Karpathy's makemore, itself nanoGPT's GPT), with
// its state_dict names, so a checkpoint loads into the PyTorch model and back:
//
//   x = wte(idx) + wpe(0..T-1)                             (B, T, C)
//   per block, pre-norm:  x = x + attn(ln_1(x)); x = x + mlp(ln_2(x))
//             post-norm:  x = ln_1(x + attn(x)); x = ln_2(x + mlp(x))
//   pre-norm with a norm: x = ln_f(x)
//   logits = lm_head(x)                                     (B, T, V)
//
// attn is causal self-attention with H heads of C / H channels; mlp is c_fc (4C), GELU
// (tanh approximation, makemore's NewGELU), c_proj. The model is torch.nn's composition in
// minidl's modules (ModuleDict, ModuleList, Embedding, Linear, the norms) and one fused call,
// self_attention_packed. Generation runs one token at a time through step(), each block's
// keys and values in the library's KVCache.
#include <cstdint>
#include <memory>

#include "minidl/minidl.hpp"
#include "models/charlm_norms.hpp"

namespace minidl::charlm {

/// The vocabulary: token 0 is '.', the start and end of a word; 'a'..'z' are 1..26.
inline constexpr int64_t kVocabSize = 27;

/// How the blocks' weights start (--init). makemore: PyTorch's defaults, as makemore draws
/// them. xavier: the original Transformer's (and fairseq's) choice, then xavier_uniform_
/// (gain 1) on every block's attn.c_attn, attn.c_proj, mlp.c_fc and mlp.c_proj weight, their
/// biases zero; the embeddings, norms and lm_head keep PyTorch's defaults.
enum class Init { Makemore, Xavier };
std::string short_name(Init init);  // "makemore", "xavier"
/// The Init named `name`; UsageError listing them otherwise.
Init parse_init(const std::string& name);

struct ModelOptions {
  int64_t block_size = 32;  // positions: a word has at most block_size - 1 letters
  int64_t layers = 4;       // makemore's n_layer
  int64_t heads = 4;        // n_head
  int64_t width = 64;       // n_embd, C
  NormKind norm = NormKind::Layer;
  Position position = Position::Pre;
  Init init = Init::Makemore;
  bool sync_batch_norm = false;  // --sync-bn: the BatchNorms as SyncBatchNorm (norms.hpp)
};

class CausalSelfAttention : public nn::Module {
 public:
  CausalSelfAttention(int64_t width, int64_t heads, Generator& gen);
  /// (B, T, C) -> (B, T, C), each position attending to itself and those before it.
  Tensor forward(const Tensor& x) override;
  /// (B, L, C), the next positions: the library's cached call appends them to cache and lets
  /// each attend to every position so far.
  Tensor forward(const Tensor& x, LayerCache& cache);
  std::string type_name() const override { return "CausalSelfAttention"; }

  std::shared_ptr<nn::Linear> c_attn;  // (3C, C): q, k, v
  std::shared_ptr<nn::Linear> c_proj;  // (C, C)
  /// Set (--attention): each forward writes its attention weights (B, H, T, T) here. Null
  /// while training, so training's forward keeps nothing more.
  Tensor* weights_out = nullptr;

 private:
  int64_t heads_;
};

class Block : public nn::Module {
 public:
  Block(const ModelOptions& options, Generator& gen);
  Tensor forward(const Tensor& x) override { return forward(x, nullptr); }
  /// mask: the batch's real positions, for the batch-masked norms (null: every one is real).
  Tensor forward(const Tensor& x, const TokenMask* mask);
  Tensor forward(const Tensor& x, LayerCache& cache);
  std::string type_name() const override { return "Block"; }

 private:
  template <typename Attention>
  Tensor run(const Tensor& x, const TokenMask* mask, Attention&& attention);
  Tensor mlp(const Tensor& x);

  Position position_;
  std::shared_ptr<nn::Module> ln_1, ln_2;
  std::shared_ptr<CausalSelfAttention> attn;
  std::shared_ptr<nn::Linear> c_fc, c_proj;  // mlp.c_fc (4C, C), mlp.c_proj (C, 4C)
};

class CharTransformer : public nn::Module {
 public:
  /// Parameters drawn from gen in state_dict order (wte, wpe, each block, lm_head), each as
  /// PyTorch's default init draws it; with Init::Xavier the blocks' weights are then redrawn
  /// from gen, in state_dict order.
  CharTransformer(const ModelOptions& options, Generator& gen);

  /// idx (B, T) tokens -> logits (B, T, V), every position real.
  Tensor forward(const Tensor& idx) override { return run(idx, nullptr); }
  /// The same with the batch's padding marked: batch-masked norms see only the real rows.
  Tensor forward(const Tensor& idx, const TokenMask& mask) { return run(idx, &mask); }
  /// The logits (B, V) of the next token after `tokens` (B, 1) at `position`, through the
  /// cache (empty at position 0). Generation records no graph: call it under NoGradGuard.
  Tensor step(const Tensor& tokens, int64_t position, KVCache& cache);
  std::string type_name() const override { return "Transformer"; }
  const ModelOptions& options() const { return options_; }

 private:
  Tensor run(const Tensor& idx, const TokenMask* mask);
  Tensor norm_f(const Tensor& x, const TokenMask* mask);

  ModelOptions options_;
  std::shared_ptr<nn::ModuleDict> transformer;  // wte, wpe, h, ln_f
  std::shared_ptr<nn::Embedding> wte, wpe;
  std::shared_ptr<nn::ModuleList> h;  // the blocks
  std::shared_ptr<nn::Module> ln_f;   // null: post-norm, or no norm
  std::shared_ptr<nn::Linear> lm_head;
};

}  // namespace minidl::charlm
