#include "data/text_lines.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "minidl/tensor/error.hpp"

namespace minidl::data::detail {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

bool is_blank_line(std::string_view line) { return std::all_of(line.begin(), line.end(), is_blank); }

std::unique_ptr<std::istream> open_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw UsageError(cat(path, ": is a directory, not a file"));
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) throw UsageError(cat(path, ": cannot open the file (missing or unreadable)"));
  return in;
}

// The whole field, an optional '+' before it, as a T; nothing when it is not one.
template <typename T>
std::optional<T> parse_field(std::string_view field) {
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  T value{};
  auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || error != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return value;
}

std::string too_large() {
  return cat("the file holds more than ", kMaxTextBytes, " bytes (", kMaxTextBytes >> 20,
             " MiB), more than any data file minidl reads");
}

}  // namespace

TextLines::TextLines(std::string path) : path_(std::move(path)), in_(open_file(path_)) {
  // A regular file's size is known before reading it: refuse it whole, before its first line.
  std::error_code error;
  if (std::filesystem::is_regular_file(path_, error) && std::filesystem::file_size(path_, error) > kMaxTextBytes)
    fail_file(too_large());
  if (!hold_next_content()) fail_file("the file is empty");
}

TextLines::TextLines(std::string name, std::string text)
    : path_(std::move(name)), in_(std::make_unique<std::istringstream>(std::move(text))) {
  if (!hold_next_content()) fail_file("the file is empty");
}

// Reads up to the next '\n' a byte at a time from the stream's buffer, so a line without an
// end (one 50 MB line, /dev/zero) costs kMaxLineBytes at most.
bool TextLines::read_line(std::string& line) {
  line.clear();
  std::streambuf& buffer = *in_->rdbuf();
  const auto end = std::char_traits<char>::eof();
  auto c = buffer.sbumpc();
  if (c == end) return false;
  ++lines_read_;
  for (; c != end && c != '\n'; c = buffer.sbumpc()) {
    if (line.size() == kMaxLineBytes)
      throw UsageError(cat(path_, ", line ", lines_read_, ": the line is longer than ", kMaxLineBytes, " bytes (",
                           kMaxLineBytes >> 20, " MiB), more than any line of a data file minidl reads"));
    line.push_back(char(c));
  }
  bytes_read_ += line.size() + (c == '\n');
  if (bytes_read_ > kMaxTextBytes) fail_file(too_large());
  return true;
}

bool TextLines::hold_next_content() {
  while (read_line(held_)) {
    if (!is_blank_line(held_)) return holding_ = true;
    ++blanks_before_;
  }
  blanks_before_ = 0;  // blank lines at the end are no lines
  return false;
}

std::optional<std::string_view> TextLines::next() {
  if (!holding_ && !hold_next_content()) return std::nullopt;
  ++line_number_;
  if (blanks_before_ > 0) {
    --blanks_before_;
    return std::string_view();
  }
  holding_ = false;
  std::string_view line(held_);
  if (line.back() == '\r') line.remove_suffix(1);
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

std::optional<double> parse_number(std::string_view field) {
  const std::optional<double> value = parse_field<double>(field);
  return value && std::isfinite(*value) ? value : std::nullopt;
}

std::optional<int64_t> parse_integer(std::string_view field) { return parse_field<int64_t>(field); }

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
