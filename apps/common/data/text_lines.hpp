#pragma once
// Line-by-line reading for the data readers, with errors worded
// "<file>, line L, column C: what is wrong" (UsageError: the file is user input).
#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minidl::data::detail {

class TextLines {
 public:
  /// Opens the file; throws UsageError when it is a directory, cannot be opened, or holds
  /// more than kMaxTextBytes. Lines are read one at a time as next() asks for them, so memory
  /// holds one line (at most kMaxLineBytes), never the whole file. Throws UsageError when the
  /// file holds no line that is not blank.
  explicit TextLines(std::string path);
  /// Lines of text already in memory; `name` stands for the file in messages.
  TextLines(std::string name, std::string text);

  /// The next line without its line ending, or nullopt at the end; valid until the next call.
  /// Blank lines at the end of the file are skipped; a blank line before other lines is
  /// returned as "". Throws UsageError naming the line when it is longer than kMaxLineBytes,
  /// and the file when the lines read so far exceed kMaxTextBytes (a FIFO, a device).
  std::optional<std::string_view> next();
  int64_t line_number() const { return line_number_; }  // 1-based, of the last line returned
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& what) const;                  // names file and line
  [[noreturn]] void fail(int64_t column, const std::string& what) const;  // and the column
  [[noreturn]] void fail_file(const std::string& what) const;             // names the file only

 private:
  bool read_line(std::string& line);  // the next raw line; false at the end of the input
  bool hold_next_content();           // counts blank lines, holds the next other line; false at the end

  std::string path_;
  std::unique_ptr<std::istream> in_;
  std::string held_;           // the next line that is not blank
  bool holding_ = false;       // held_ is waiting to be returned
  int64_t blanks_before_ = 0;  // blank lines to return before held_
  int64_t lines_read_ = 0;     // raw lines taken from the input, for messages about a line being read
  size_t bytes_read_ = 0;      // for kMaxTextBytes
  int64_t line_number_ = 0;
};

/// The largest text file the readers take: the digits data is 0.3 MB.
inline constexpr size_t kMaxTextBytes = size_t(64) << 20;
/// The longest line the readers take: a digits row is about 200 bytes, a batch-order line
/// (one epoch's permutation of the 1437 training examples) about 7 KB.
inline constexpr size_t kMaxLineBytes = size_t(1) << 20;

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
