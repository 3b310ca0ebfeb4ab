#include "models/charlm_model.hpp"

namespace minidl::charlm {

std::string short_name(Init init) { return init == Init::Xavier ? "xavier" : "makemore"; }

Init parse_init(const std::string& name) {
  if (name == "makemore") return Init::Makemore;
  if (name == "xavier") return Init::Xavier;
  throw UsageError(cat("--init: unknown init \"", name, "\": choose makemore or xavier"));
}

namespace {

// Init::Xavier: after PyTorch's defaults (so makemore's draws stay as they are), as a PyTorch
// user re-initializes a built model: every Linear of attn and mlp, weight and bias.
void xavier_blocks(nn::ModuleList& blocks, Generator& gen) {
  for (auto& [name, parameter] : blocks.named_parameters()) {
    if (name.find(".attn.") == std::string::npos && name.find(".mlp.") == std::string::npos) continue;
    if (name.ends_with(".weight")) nn::init::xavier_uniform_(parameter, 1.0, gen);
    else nn::init::zeros_(parameter);
  }
}

}  // namespace

CausalSelfAttention::CausalSelfAttention(int64_t width, int64_t heads, Generator& gen) : heads_(heads) {
  c_attn = register_module("c_attn", std::make_shared<nn::Linear>(width, 3 * width, gen));
  c_proj = register_module("c_proj", std::make_shared<nn::Linear>(width, width, gen));
}

Tensor CausalSelfAttention::forward(const Tensor& x) {
  // The packed op reads q, k and v of every head from c_attn's (B, T, 3C) where they lie.
  return (*c_proj)(self_attention_packed((*c_attn)(x), heads_, /*is_causal=*/true, weights_out));
}

Tensor CausalSelfAttention::forward(const Tensor& x, LayerCache& cache) {
  return (*c_proj)(self_attention_packed((*c_attn)(x), heads_, cache));
}

Block::Block(const ModelOptions& o, Generator& gen) : position_(o.position) {
  ln_1 = register_module("ln_1", make_norm(o.norm, o.width, o.sync_batch_norm));
  attn = register_module("attn", std::make_shared<CausalSelfAttention>(o.width, o.heads, gen));
  ln_2 = register_module("ln_2", make_norm(o.norm, o.width, o.sync_batch_norm));
  auto mlp = register_module("mlp", std::make_shared<nn::ModuleDict>());
  c_fc = mlp->insert("c_fc", std::make_shared<nn::Linear>(o.width, 4 * o.width, gen));
  c_proj = mlp->insert("c_proj", std::make_shared<nn::Linear>(4 * o.width, o.width, gen));
}

Tensor Block::mlp(const Tensor& x) { return (*c_proj)(gelu((*c_fc)(x), "tanh")); }

template <typename Attention>
Tensor Block::run(const Tensor& x, const TokenMask* mask, Attention&& attention) {
  if (position_ == Position::Pre) {
    const Tensor h = x + attention(normalize(*ln_1, x, mask));
    return h + mlp(normalize(*ln_2, h, mask));
  }
  const Tensor h = normalize(*ln_1, x + attention(x), mask);
  return normalize(*ln_2, h + mlp(h), mask);
}

Tensor Block::forward(const Tensor& x, const TokenMask* mask) {
  return run(x, mask, [this](const Tensor& in) { return (*attn)(in); });
}

Tensor Block::forward(const Tensor& x, LayerCache& cache) {
  return run(x, nullptr, [&](const Tensor& in) { return attn->forward(in, cache); });
}

CharTransformer::CharTransformer(const ModelOptions& o, Generator& gen) : options_(o) {
  transformer = register_module("transformer", std::make_shared<nn::ModuleDict>());
  wte = transformer->insert("wte", std::make_shared<nn::Embedding>(kVocabSize, o.width, gen));
  wpe = transformer->insert("wpe", std::make_shared<nn::Embedding>(o.block_size, o.width, gen));
  h = transformer->insert("h", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < o.layers; ++i) h->append(std::make_shared<Block>(o, gen));
  if (o.position == Position::Pre && o.norm != NormKind::None)
    ln_f = transformer->insert("ln_f", make_norm(o.norm, o.width, o.sync_batch_norm));
  lm_head =
      register_module("lm_head", std::make_shared<nn::Linear>(nn::LinearOptions(o.width, kVocabSize).bias(false), gen));
  if (o.init == Init::Xavier) xavier_blocks(*h, gen);
}

Tensor CharTransformer::norm_f(const Tensor& x, const TokenMask* mask) { return ln_f ? normalize(*ln_f, x, mask) : x; }

Tensor CharTransformer::run(const Tensor& idx, const TokenMask* mask) {
  const int64_t t = idx.size(1);
  Tensor x = (*wte)(idx) + (*wpe)(Tensor::arange(t));  // (B, T, C) + (T, C)
  for (int64_t i = 0; i < h->size(); ++i) {
    Block& block = h->at<Block>(i);
    x = block.call(x, [&](const Tensor& in) { return block.forward(in, mask); });  // its hooks fire
  }
  return (*lm_head)(norm_f(x, mask));  // (B, T, V)
}

Tensor CharTransformer::step(const Tensor& tokens, int64_t position, KVCache& cache) {
  cache.resize(size_t(h->size()));
  const Tensor pos = Tensor::full({1}, float(position));
  Tensor x = (*wte)(tokens) + (*wpe)(pos);  // (B, 1, C) + (1, C)
  for (int64_t i = 0; i < h->size(); ++i) x = h->at<Block>(i).forward(x, cache[size_t(i)]);
  return (*lm_head)(norm_f(x, nullptr)).reshape({tokens.size(0), kVocabSize});  // (B, V)
}

}  // namespace minidl::charlm
