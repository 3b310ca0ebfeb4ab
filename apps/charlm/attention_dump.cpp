#include "attention_dump.hpp"

#include "training/digits_train.hpp"

namespace minidl::charlm {

namespace {

// The model's attention modules in block order (the depth-first order of its children).
void collect_attention(nn::Module& module, std::vector<CausalSelfAttention*>& out) {
  if (auto* attention = dynamic_cast<CausalSelfAttention*>(&module)) out.push_back(attention);
  for (const auto& child : module.named_children()) collect_attention(*child.second, out);
}

// One eval-mode forward whose attention modules write their weights into `weights`; the
// modules forget the buffers and the model gets its mode back even when forward throws.
class ObservedForward {
 public:
  ObservedForward(CharTransformer& model, std::vector<Tensor>& weights)
      : model_(model), was_training_(model.is_training()) {
    collect_attention(model, layers_);
    weights.resize(layers_.size());
    for (size_t i = 0; i < layers_.size(); ++i) layers_[i]->weights_out = &weights[i];
    model.eval();
  }
  ~ObservedForward() {
    for (CausalSelfAttention* layer : layers_) layer->weights_out = nullptr;
    model_.train(was_training_);
  }
  ObservedForward(const ObservedForward&) = delete;
  ObservedForward& operator=(const ObservedForward&) = delete;

 private:
  CharTransformer& model_;
  bool was_training_;
  std::vector<CausalSelfAttention*> layers_;
};

char token_letter(int64_t position, const std::string& word) {
  return position == 0 ? '.' : word[size_t(position - 1)];
}

const char* kExample = "e.g. --attention hello,attention.csv";

}  // namespace

AttentionRequest parse_attention(const std::string& text, int64_t block_size) {
  const size_t comma = text.find(',');
  if (comma == std::string::npos)
    throw UsageError(cat("--attention takes WORD,FILE (", kExample, "), got \"", text, "\""));
  AttentionRequest request{text.substr(0, comma), text.substr(comma + 1)};
  const std::string& word = request.word;
  if (word.empty()) throw UsageError(cat("--attention \"", text, "\" has no word before the comma (", kExample, ")"));
  if (request.file.empty())
    throw UsageError(cat("--attention \"", text, "\" has no file after the comma (", kExample, ")"));
  if (word.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos)
    throw UsageError(cat("--attention: the word \"", word,
                         "\" has a character outside a-z, the model's vocabulary: give a lowercase a-z word"));
  if (int64_t(word.size()) >= block_size)
    throw UsageError(cat("--attention: the word \"", word, "\" has ", word.size(), " letters, more than the ",
                         block_size - 1, " --block-size ", block_size, " allows: choose a shorter word"));
  return request;
}

std::vector<Tensor> attention_weights(CharTransformer& model, const std::string& word) {
  std::vector<float> tokens{0.0f};  // x = [0, w1..wn]
  for (char letter : word) tokens.push_back(float(token_of(letter)));
  const auto t = int64_t(tokens.size());
  std::vector<Tensor> weights;
  {
    NoGradGuard no_grad;
    ObservedForward observed(model, weights);
    model.forward(Tensor::from_vector(tokens, {1, t}));
  }
  for (Tensor& w : weights) w = w.reshape({w.size(1), t, t});  // (1, H, T, T) -> (H, T, T)
  return weights;
}

std::string attention_csv(const std::vector<RunResult>& results, const std::string& word) {
  std::string csv = "run,seed,layer,head,query,key,query_token,key_token,weight\n";
  for (const RunResult& r : results) {
    if (!r.ok() || !r.model) continue;
    const std::string run = run_name(r.norm, r.position);
    const std::vector<Tensor> layers = attention_weights(*r.model, word);
    for (size_t layer = 0; layer < layers.size(); ++layer) {
      const Tensor& w = layers[layer];  // (H, T, T)
      const int64_t heads = w.size(0), t = w.size(1);
      const float* weight = w.data();
      for (int64_t head = 0; head < heads; ++head)
        for (int64_t query = 0; query < t; ++query)
          for (int64_t key = 0; key < t; ++key)
            csv += cat(run, ",", r.seed, ",", layer, ",", head, ",", query, ",", key, ",", token_letter(query, word),
                       ",", token_letter(key, word), ",", lesson::exact_text(*weight++), "\n");
    }
  }
  return csv;
}

}  // namespace minidl::charlm
