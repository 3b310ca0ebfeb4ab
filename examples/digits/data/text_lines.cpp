#include "text_lines.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "minidl/tensor/error.hpp"

namespace minidl::data::detail {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

std::string read_whole_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw UsageError(cat(path, ": is a directory, not a file"));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(cat(path, ": cannot open the file (missing or unreadable)"));
  // Read in chunks up to the limit, so a huge or endless input (a FIFO, /dev/zero) costs at
  // most the limit, never all the memory there is.
  std::string content;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    if (content.size() + size_t(in.gcount()) > kMaxTextBytes)
      throw UsageError(cat(path, ": the file holds more than ", kMaxTextBytes, " bytes (", kMaxTextBytes >> 20,
                           " MiB), more than any data file minidl reads"));
    content.append(chunk, size_t(in.gcount()));
  }
  if (in.bad()) throw UsageError(cat(path, ": reading the file failed"));
  return content;
}

}  // namespace

TextLines::TextLines(std::string path) : TextLines(path, read_whole_file(path)) {}

TextLines::TextLines(std::string name, std::string text) : path_(std::move(name)), text_(std::move(text)) {
  content_end_ = text_.size();
  while (content_end_ > 0 && is_blank(text_[content_end_ - 1])) --content_end_;
  if (content_end_ == 0) fail_file("the file is empty");
}

std::optional<std::string_view> TextLines::next() {
  if (position_ >= content_end_) return std::nullopt;
  size_t end = text_.find('\n', position_);
  if (end == std::string::npos) end = text_.size();
  std::string_view line(text_.data() + position_, end - position_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  position_ = end + 1;
  ++line_number_;
  return line;
}

void TextLines::fail(const std::string& what) const {
  throw UsageError(cat(path_, ", line ", line_number_, ": ", what));
}

void TextLines::fail(int64_t column, const std::string& what) const {
  throw UsageError(cat(path_, ", line ", line_number_, ", column ", column, ": ", what));
}

void TextLines::fail_file(const std::string& what) const { throw UsageError(cat(path_, ": ", what)); }

size_t split_fields(std::string_view line, char sep, std::vector<std::string_view>& fields, size_t keep) {
  fields.clear();
  size_t start = 0, count = 1;
  for (size_t i = 0; i < line.size(); ++i)  // a plain scan: fields are a character or two
    if (line[i] == sep) {
      if (fields.size() < keep) fields.push_back(trim(line.substr(start, i - start)));
      start = i + 1;
      ++count;
    }
  if (fields.size() < keep) fields.push_back(trim(line.substr(start)));
  return count;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (is_blank(line[i]) || line[i] == ',')) ++i;
    size_t start = i;
    while (i < line.size() && !is_blank(line[i]) && line[i] != ',') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

namespace {

// The value of a field of 1 to 9 ASCII digits (exact in a double), else nullopt. The digits
// file is 115,000 such small integers: this is 10x faster there than from_chars for doubles.
std::optional<double> parse_small_integer(std::string_view field) {
  if (field.empty() || field.size() > 9) return std::nullopt;
  int64_t value = 0;
  for (char c : field) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return double(value);
}

}  // namespace

std::optional<double> parse_number(std::string_view field) {
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  if (std::optional<double> small = parse_small_integer(field)) return small;
  double value = 0.0;
  auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || error != std::errc() || end != field.data() + field.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

std::optional<int64_t> parse_integer(std::string_view field) {
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  int64_t value = 0;
  auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || error != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return value;
}

std::string quoted(std::string_view field) {
  constexpr size_t limit = 24;
  const bool shortened = field.size() > limit;
  std::string text = "\"";
  for (unsigned char c : field.substr(0, limit)) {  // control bytes would cut or garble the message line
    if (c == '\0') {
      text += "\\0";
    } else if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      text += escaped;
    } else {
      text += char(c);
    }
  }
  return text + (shortened ? "...\"" : "\"");
}

}  // namespace minidl::data::detail
