#pragma once
// The words charlm learns from: a file of one lowercase a-z word per line (data/words.txt),
// its train / validation split, and the padded batches the model trains on.
#include <cstdint>
#include <string>
#include <vector>

#include "models/charlm_norms.hpp"

namespace minidl::charlm {

/// Reads one word per line, each 1 to max_letters letters a-z (a trailing '\r' is dropped).
/// Throws UsageError naming the file and line, and what to do: an empty file, a blank line,
/// a character outside a-z (named, and its column), invalid UTF-8, a word longer than
/// max_letters (naming --block-size), a directory.
std::vector<std::string> read_words(const std::string& path, int64_t max_letters);

/// The words of both splits, as indices into one list.
struct WordSplit {
  std::vector<std::string> words;
  std::vector<int64_t> train, val;  // indices into words
};

/// data_file's words and split: <stem>_train_indices.txt and <stem>_val_indices.txt beside it
/// when both exist (data/words.txt's), else every 10th word (index % 10 == 9) for validation.
/// UsageError when that leaves no validation word (fewer than 10 words), naming the fix.
WordSplit load_split(const std::string& data_file, int64_t max_letters);

/// A batch of B words as the model takes it, padded on the right to T = longest + 1:
/// x = [0, w1..wn, 0...], y = [w1..wn, 0, -1...] (-1: ignored by the loss).
struct Batch {
  Tensor x;        // (B, T) tokens
  Tensor y;        // (B * T) targets, -1 at padding
  TokenMask mask;  // the real positions: t <= n for a word of n letters
  int64_t tokens;  // real positions, M
};

/// The batch of words[picks[0]], words[picks[1]], ...; min_length > longest + 1 pads further.
Batch make_batch(const std::vector<std::string>& words, const std::vector<int64_t>& picks, int64_t min_length = 0);

/// A word's tokens: 'a'..'z' as 1..26.
int64_t token_of(char letter);
/// The word spelled by tokens 1..26 up to the first 0.
std::string word_of(const std::vector<int64_t>& tokens);

}  // namespace minidl::charlm
