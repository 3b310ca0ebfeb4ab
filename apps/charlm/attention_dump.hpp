#pragma once
// --attention WORD,FILE: the attention weights of every block and head of a trained model for
// one word, as the CSV scripts/plot_attention.sh draws as heatmaps.
#include <cstdint>
#include <string>
#include <vector>

#include "training/charlm_train.hpp"

namespace minidl::charlm {

struct AttentionRequest {
  std::string word;  // a-z, fewer than block_size letters
  std::string file;  // the CSV to write
};

/// "hello,attn.csv" -> {hello, attn.csv}: the word ends at the first comma (a word has none),
/// the file is the rest. UsageError naming --attention, what came and the fix: no comma, an
/// empty word or file, a character outside a-z, a word of block_size letters or more.
AttentionRequest parse_attention(const std::string& text, int64_t block_size);

/// softmax(q k^T / sqrt(D)) after the causal mask in every block, for x = [0, w1..wn] run in
/// eval mode without gradients: per block (H, T, T), T = n + 1, rows the query position,
/// columns the key position, exactly 0 above the diagonal. The model's mode is restored.
std::vector<Tensor> attention_weights(CharTransformer& model, const std::string& word);

/// Every finished run's weights for `word`: header
/// "run,seed,layer,head,query,key,query_token,key_token,weight", every query and key position
/// (T x T per head), tokens as '.' and letters, weights with 9 significant digits.
std::string attention_csv(const std::vector<RunResult>& results, const std::string& word);

}  // namespace minidl::charlm
