#pragma once
// Line-by-line reading for the data readers, with errors worded
// "<file>, line L, column C: what is wrong" (UsageError: the file is user input).
#include <cstdint>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minidl::data::detail {

class TextLines {
 public:
  /// Reads the whole file; throws UsageError when it is a directory, cannot be opened or
  /// read, is empty, or holds more than kMaxTextBytes.
  explicit TextLines(std::string path);
  /// Lines of text already in memory; `name` stands for the file in messages.
  TextLines(std::string name, std::string text);

  /// The next line without its line ending, or nullopt at the end. Blank lines at the end
  /// of the file are skipped; a blank line before other lines is returned (as "").
  std::optional<std::string_view> next();
  int64_t line_number() const { return line_number_; }  // 1-based, of the last line returned
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& what) const;                  // names file and line
  [[noreturn]] void fail(int64_t column, const std::string& what) const;  // and the column
  [[noreturn]] void fail_file(const std::string& what) const;             // names the file only

 private:
  std::string path_;
  std::string text_;
  size_t position_ = 0;
  size_t content_end_ = 0;  // end of the last non-blank line
  int64_t line_number_ = 0;
};

/// The largest text file the readers take: the digits data is 0.3 MB.
inline constexpr size_t kMaxTextBytes = size_t(64) << 20;

/// Fields separated by sep, each trimmed of spaces and tabs, into `fields` (cleared first:
/// a reader reuses one vector for every line), at most `keep` of them (a line of a million
/// separators costs no memory); returns how many fields the line has.
size_t split_fields(std::string_view line, char sep, std::vector<std::string_view>& fields, size_t keep = SIZE_MAX);
/// Fields separated by commas and/or whitespace (no empty fields).
std::vector<std::string_view> split_words(std::string_view line);

/// The whole field as a number or an integer; nullopt when it is not one.
std::optional<double> parse_number(std::string_view field);
std::optional<int64_t> parse_integer(std::string_view field);

/// Quotes a field for a message, shortened when long, control bytes escaped ("a\0b", "\x01").
std::string quoted(std::string_view field);

}  // namespace minidl::data::detail
