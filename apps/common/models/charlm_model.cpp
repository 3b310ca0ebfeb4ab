#include "models/charlm_model.hpp"

namespace minidl::charlm {

namespace {

// A named group of modules with no forward of its own, for the state_dict's dotted names:
// PyTorch's ModuleDict ("transformer") and ModuleList ("h").
class ModuleGroup : public nn::Module {
 public:
  explicit ModuleGroup(std::string type) : type_(std::move(type)) {}
  template <typename M>
  std::shared_ptr<M> add(const std::string& name, std::shared_ptr<M> module) {
    return register_module(name, std::move(module));
  }
  Tensor forward(const Tensor&) override { throw Error(cat(type_, " has no forward: call its modules")); }
  std::string type_name() const override { return type_; }

 private:
  std::string type_;
};

}  // namespace

CausalSelfAttention::CausalSelfAttention(int64_t width, int64_t heads, Generator& gen) : heads_(heads) {
  c_attn = register_module("c_attn", std::make_shared<nn::Linear>(width, 3 * width, gen));
  c_proj = register_module("c_proj", std::make_shared<nn::Linear>(width, width, gen));
}

Tensor CausalSelfAttention::split_heads(const Tensor& x) const {
  const int64_t b = x.size(0), t = x.size(1), c = x.size(2);
  return permute(x.reshape({b, t, heads_, c / heads_}), {0, 2, 1, 3});
}

Tensor CausalSelfAttention::merge_heads(const Tensor& y) const {
  const int64_t b = y.size(0), t = y.size(2);
  return permute(y, {0, 2, 1, 3}).reshape({b, t, heads_ * y.size(3)});
}

Tensor CausalSelfAttention::forward(const Tensor& x) {
  // The packed op reads q, k and v of every head from c_attn's (B, T, 3C) where they lie.
  return (*c_proj)(self_attention_packed((*c_attn)(x), heads_, /*is_causal=*/true, weights_out));
}

Tensor CausalSelfAttention::forward_cached(const Tensor& x, LayerCache& cache) {
  const std::vector<Tensor> qkv = split((*c_attn)(x), x.size(-1), -1);  // 3 x (B, 1, C)
  const Tensor k = split_heads(qkv[1]), v = split_heads(qkv[2]);        // (B, H, 1, D)
  cache.keys = cache.keys.defined() ? cat({cache.keys, k}, 2) : k;      // (B, H, t, D)
  cache.values = cache.values.defined() ? cat({cache.values, v}, 2) : v;
  // The one new query attends to every cached position: no mask.
  return (*c_proj)(merge_heads(scaled_dot_product_attention(split_heads(qkv[0]), cache.keys, cache.values)));
}

Block::Block(const ModelOptions& o, const std::shared_ptr<const TokenMask>& mask, Generator& gen)
    : position_(o.position) {
  ln_1 = register_module("ln_1", make_norm(o.norm, o.width, mask, o.sync_batch_norm));
  attn = register_module("attn", std::make_shared<CausalSelfAttention>(o.width, o.heads, gen));
  ln_2 = register_module("ln_2", make_norm(o.norm, o.width, mask, o.sync_batch_norm));
  auto group = register_module("mlp", std::make_shared<ModuleGroup>("ModuleDict"));
  c_fc = group->add("c_fc", std::make_shared<nn::Linear>(o.width, 4 * o.width, gen));
  c_proj = group->add("c_proj", std::make_shared<nn::Linear>(4 * o.width, o.width, gen));
}

Tensor Block::mlp(const Tensor& x) { return (*c_proj)(gelu((*c_fc)(x), "tanh")); }

template <typename Attention>
Tensor Block::run(const Tensor& x, Attention&& attention) {
  if (position_ == Position::Pre) {
    const Tensor h = x + attention((*ln_1)(x));
    return h + mlp((*ln_2)(h));
  }
  const Tensor h = (*ln_1)(x + attention(x));
  return (*ln_2)(h + mlp(h));
}

Tensor Block::forward(const Tensor& x) {
  return run(x, [this](const Tensor& in) { return (*attn)(in); });
}

Tensor Block::forward_cached(const Tensor& x, LayerCache& cache) {
  return run(x, [&](const Tensor& in) { return attn->forward_cached(in, cache); });
}

CharTransformer::CharTransformer(const ModelOptions& o, Generator& gen)
    : options_(o), mask_(std::make_shared<TokenMask>()) {
  auto trunk = register_module("transformer", std::make_shared<ModuleGroup>("ModuleDict"));
  wte = trunk->add("wte", std::make_shared<nn::Embedding>(kVocabSize, o.width, gen));
  wpe = trunk->add("wpe", std::make_shared<nn::Embedding>(o.block_size, o.width, gen));
  auto h = trunk->add("h", std::make_shared<ModuleGroup>("ModuleList"));
  for (int64_t i = 0; i < o.layers; ++i)
    blocks_.push_back(h->add(std::to_string(i), std::make_shared<Block>(o, mask_, gen)));
  if (o.position == Position::Pre && o.norm != NormKind::None)
    ln_f = trunk->add("ln_f", make_norm(o.norm, o.width, mask_, o.sync_batch_norm));
  lm_head =
      register_module("lm_head", std::make_shared<nn::Linear>(nn::LinearOptions(o.width, kVocabSize).bias(false), gen));
}

Tensor CharTransformer::run_blocks(const Tensor& idx) {
  const int64_t t = idx.size(1);
  Tensor x = (*wte)(idx) + (*wpe)(Tensor::arange(t));  // (B, T, C) + (T, C)
  for (const auto& block : blocks_) x = (*block)(x);
  if (ln_f) x = (*ln_f)(x);
  return (*lm_head)(x);  // (B, T, V)
}

Tensor CharTransformer::forward(const Tensor& idx) {
  mask_->active = false;
  return run_blocks(idx);
}

Tensor CharTransformer::forward(const Tensor& idx, const TokenMask& mask) {
  *mask_ = mask;
  Tensor logits = run_blocks(idx);
  mask_->active = false;
  return logits;
}

Tensor CharTransformer::step(const Tensor& tokens, int64_t position, KVCache& cache) {
  mask_->active = false;
  cache.resize(blocks_.size());
  const Tensor pos = Tensor::full({1}, float(position));
  Tensor x = (*wte)(tokens) + (*wpe)(pos);  // (B, 1, C) + (1, C)
  for (size_t i = 0; i < blocks_.size(); ++i) x = blocks_[i]->forward_cached(x, cache[i]);
  if (ln_f) x = (*ln_f)(x);
  return (*lm_head)(x).reshape({tokens.size(0), kVocabSize});  // (B, V)
}

}  // namespace minidl::charlm
