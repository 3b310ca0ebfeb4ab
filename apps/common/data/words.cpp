#include "data/words.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "data/digits.hpp"
#include "data/text_lines.hpp"

namespace fs = std::filesystem;

namespace minidl::charlm {

namespace {

// The length of the UTF-8 sequence starting at line[i], 0 when it is not a valid one.
size_t utf8_length(std::string_view line, size_t i) {
  const auto lead = static_cast<unsigned char>(line[i]);
  const size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
  if (length == 0 || i + length > line.size()) return 0;
  for (size_t j = 1; j < length; ++j)
    if ((static_cast<unsigned char>(line[i + j]) >> 6) != 0x2) return 0;
  return length;
}

// Refuses the first character of line outside a-z, naming it and its column (in characters).
void check_letters(const data::detail::TextLines& lines, std::string_view line) {
  int64_t column = 0;
  for (size_t i = 0; i < line.size();) {
    ++column;
    const size_t length = utf8_length(line, i);
    if (length == 0) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(line[i]));
      lines.fail(column, cat("invalid UTF-8 (byte ", byte, "): the word list must be UTF-8 text"));
    }
    const std::string_view character = line.substr(i, length);
    if (length > 1 || character[0] < 'a' || character[0] > 'z')
      lines.fail(column, cat("the character ", data::detail::quoted(character),
                             " is outside the vocabulary a-z: keep one lowercase a-z word per line"));
    i += length;
  }
}

}  // namespace

std::vector<std::string> read_words(const std::string& path, int64_t max_letters) {
  data::detail::TextLines lines(path);
  std::vector<std::string> words;
  while (auto line = lines.next()) {
    if (line->empty()) lines.fail("a blank line: keep one word per line");
    check_letters(lines, *line);
    if (int64_t(line->size()) > max_letters)
      lines.fail(cat("the word has ", line->size(), " letters, more than the ", max_letters, " --block-size ",
                     max_letters + 1, " allows: pass --block-size ", line->size() + 1, " or more"));
    words.emplace_back(*line);
  }
  return words;
}

WordSplit load_split(const std::string& data_file, int64_t max_letters) {
  WordSplit split;
  split.words = read_words(data_file, max_letters);
  const fs::path file(data_file);
  const fs::path train = file.parent_path() / (file.stem().string() + "_train_indices.txt");
  const fs::path val = file.parent_path() / (file.stem().string() + "_val_indices.txt");
  const auto rows = int64_t(split.words.size());
  std::error_code error;
  if (fs::exists(train, error) && fs::exists(val, error)) {
    split.train = data::read_split_indices(train.string(), rows);
    split.val = data::read_split_indices(val.string(), rows);
    return split;
  }
  for (int64_t i = 0; i < rows; ++i) (i % 10 == 9 ? split.val : split.train).push_back(i);
  // Without validation words the validation loss is 0 / 0: refuse before anything trains.
  if (split.val.empty())
    throw UsageError(
        cat(data_file, " has ", rows, " words, too few to leave any for validation (every 10th word): give ",
            "10 or more, or the split as ", train.filename().string(), " and ", val.filename().string(), " beside it"));
  return split;
}

int64_t token_of(char letter) { return letter - 'a' + 1; }

std::string word_of(const std::vector<int64_t>& tokens) {
  std::string word;
  for (int64_t token : tokens) {
    if (token == 0) break;
    word += char('a' + token - 1);
  }
  return word;
}

Batch make_batch(const std::vector<std::string>& words, const std::vector<int64_t>& picks, int64_t min_length) {
  size_t longest = 0;
  for (int64_t pick : picks) longest = std::max(longest, words[size_t(pick)].size());
  const auto b = int64_t(picks.size()), t = std::max(int64_t(longest) + 1, min_length);
  std::vector<float> x(size_t(b * t), 0.0f);      // (B, T) inputs, 0 past the word
  std::vector<float> y(size_t(b * t), -1.0f);     // (B * T) targets, -1 past the end token
  std::vector<float> output_rows(size_t(b * t));  // (B * T) row among the real ones, M at padding
  std::vector<float> real_rows;                   // (M) flat positions of the real tokens
  for (int64_t i = 0; i < b; ++i) {
    const std::string& word = words[size_t(picks[size_t(i)])];
    const auto n = int64_t(word.size());
    for (int64_t j = 0; j < t; ++j) {
      const int64_t at = i * t + j;
      if (j >= 1 && j <= n) x[size_t(at)] = float(token_of(word[size_t(j - 1)]));
      if (j < n) y[size_t(at)] = float(token_of(word[size_t(j)]));
      if (j == n) y[size_t(at)] = 0.0f;  // the end token
      if (j <= n) real_rows.push_back(float(at));
    }
  }
  const auto m = int64_t(real_rows.size());
  for (int64_t at = 0, row = 0; at < b * t; ++at)
    output_rows[size_t(at)] = row < m && real_rows[size_t(row)] == float(at) ? float(row++) : float(m);
  Batch batch{.x = Tensor::from_vector(x, {b, t}), .y = Tensor::from_vector(y, {b * t}), .mask = {}, .tokens = m};
  batch.mask = {.real_rows = Tensor::from_vector(real_rows, {m}),
                .output_rows = Tensor::from_vector(output_rows, {b * t})};
  return batch;
}

}  // namespace minidl::charlm
