#pragma once
// Writing new words with a trained model, as makemore's generate(): batch size 1, eval
// mode, one token at a time through the key/value cache, from token 0 until the model
// writes 0 again or the block is full.
#include <cstdint>
#include <string>
#include <vector>

#include "models/charlm_model.hpp"

namespace minidl::charlm {

struct SampleOptions {
  double temperature = 1.0;  // logits / temperature: below 1 sharper, above flatter
  int64_t top_k = 0;         // 0: every token may be drawn; k: only the k likeliest
};

/// One word drawn from model (left in eval mode).
std::string sample_word(CharTransformer& model, const SampleOptions& options, Generator& gen);

/// `count` words, each drawn as sample_word.
std::vector<std::string> sample_words(CharTransformer& model, int64_t count, const SampleOptions& options,
                                      Generator& gen);

}  // namespace minidl::charlm
