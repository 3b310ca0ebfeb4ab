#include "sample.hpp"

#include "data/words.hpp"

namespace minidl::charlm {

std::string sample_word(CharTransformer& model, const SampleOptions& options, Generator& gen) {
  NoGradGuard no_grad;
  model.eval();
  KVCache cache;
  std::vector<int64_t> tokens;
  float token = 0.0f;  // the start token
  // Position 0 holds the start token, so a block of N positions holds N - 1 letters.
  for (int64_t position = 0; position + 1 < model.options().block_size; ++position) {
    Tensor logits = model.step(Tensor::full({1, 1}, token), position, cache) / float(options.temperature);  // (1, V)
    if (options.top_k > 0) logits = top_k_filter(logits, options.top_k);
    token = multinomial(softmax(logits, -1), 1, false, gen).item();
    if (token == 0.0f) break;
    tokens.push_back(int64_t(token));
  }
  return word_of(tokens);
}

std::vector<std::string> sample_words(CharTransformer& model, int64_t count, const SampleOptions& options,
                                      Generator& gen) {
  std::vector<std::string> words;
  for (int64_t i = 0; i < count; ++i) words.push_back(sample_word(model, options, gen));
  return words;
}

}  // namespace minidl::charlm
