#include "data/digits.hpp"

#include <filesystem>

#include "data/text_lines.hpp"
#include "minidl/ops/shape_ops.hpp"
#include "minidl/tensor/error.hpp"

namespace minidl::data {

namespace {

constexpr int64_t kPixels = 64;
constexpr int64_t kColumns = kPixels + 1;  // the pixels, then the label
constexpr double kMaxPixel = 16.0;

bool plain_digits(std::string_view field) { return field.find_first_not_of("0123456789") == std::string_view::npos; }

// Pixel counts and labels are written as plain decimal integers: "0.5", "1e1", "-0" or "+3" are refused,
// so a file from another source that merely parses is not taken for the digits.
float parse_pixel(const detail::TextLines& lines, std::string_view field, int64_t column) {
  if (field.empty()) lines.fail(column, "missing value (expected a pixel count 0..16)");
  auto value = detail::parse_number(field);
  if (!value) lines.fail(column, cat(detail::quoted(field), " is not a number (expected a pixel count 0..16)"));
  if (*value < 0.0 || *value > kMaxPixel) lines.fail(column, cat("pixel value ", field, " is outside 0..16"));
  if (!plain_digits(field))
    lines.fail(column, cat(detail::quoted(field), " is not a plain integer (expected a pixel count 0..16 in digits)"));
  return float(*value / kMaxPixel);
}

float parse_label(const detail::TextLines& lines, std::string_view field, int64_t column) {
  if (field.empty()) lines.fail(column, "missing value (expected the label 0..9)");
  auto value = detail::parse_integer(field);
  if (!value) lines.fail(column, cat(detail::quoted(field), " is not an integer (expected the label 0..9)"));
  if (*value < 0 || *value > 9) lines.fail(column, cat("label ", *value, " is outside 0..9"));
  if (!plain_digits(field))
    lines.fail(column, cat(detail::quoted(field), " is not a plain integer (expected the label 0..9 as a digit)"));
  return float(*value);
}

Digits parse_digits(detail::TextLines lines) {
  std::vector<float> pixels, labels;
  std::vector<std::string_view> fields;
  while (auto line = lines.next()) {
    const size_t columns = detail::split_fields(*line, ',', fields, kColumns);
    if (int64_t(columns) != kColumns)
      lines.fail(cat("expected ", kColumns, " comma-separated columns (64 pixels and the label), got ", columns));
    for (int64_t c = 0; c < kPixels; ++c) pixels.push_back(parse_pixel(lines, fields[size_t(c)], c + 1));
    labels.push_back(parse_label(lines, fields[kPixels], kColumns));
  }
  const auto rows = int64_t(labels.size());
  return {Tensor::from_vector(pixels, {rows, kPixels}), Tensor::from_vector(labels, {rows})};
}

std::vector<int64_t> parse_split(detail::TextLines lines, int64_t rows) {
  std::vector<int64_t> indices;
  std::vector<int64_t> seen_on(size_t(rows), 0);  // line where each row appeared, 0 if not yet
  std::vector<std::string_view> fields;
  while (auto line = lines.next()) {
    const size_t columns = detail::split_fields(*line, ',', fields, 1);
    if (columns != 1) lines.fail(cat("expected one row index per line, got ", columns, " columns"));
    if (fields[0].empty()) lines.fail(1, "missing value (expected a row index)");
    auto index = detail::parse_integer(fields[0]);
    if (!index) lines.fail(1, cat(detail::quoted(fields[0]), " is not an integer row index"));
    if (*index < 0 || *index >= rows)
      lines.fail(1, cat("row index ", *index, " is out of range: the data has ", rows, " rows (0..", rows - 1, ")"));
    if (seen_on[size_t(*index)] != 0)
      lines.fail(1, cat("row index ", *index, " already appeared on line ", seen_on[size_t(*index)]));
    seen_on[size_t(*index)] = lines.line_number();
    indices.push_back(*index);
  }
  return indices;
}

}  // namespace

Digits read_digits_csv(const std::string& path) { return parse_digits(detail::TextLines(path)); }

Digits parse_digits_csv(std::string text, const std::string& name) {
  return parse_digits(detail::TextLines(name, std::move(text)));
}

std::vector<int64_t> read_split_indices(const std::string& path, int64_t rows) {
  return parse_split(detail::TextLines(path), rows);
}

std::vector<int64_t> parse_split_indices(std::string text, const std::string& name, int64_t rows) {
  return parse_split(detail::TextLines(name, std::move(text)), rows);
}

DigitsSplit load_digits(const std::string& data_dir) {
  const std::filesystem::path dir(data_dir);
  Digits all = read_digits_csv((dir / "digits.csv").string());
  const int64_t rows = all.labels.size(0);
  const std::string train_file = (dir / "digits_train_indices.txt").string();
  const std::string val_file = (dir / "digits_test_indices.txt").string();
  auto train = read_split_indices(train_file, rows);
  auto val = read_split_indices(val_file, rows);
  // An example in both splits would be validated on what it was trained on.
  std::vector<bool> in_train(size_t(rows), false);
  for (int64_t index : train) in_train[size_t(index)] = true;
  for (size_t i = 0; i < val.size(); ++i)
    if (in_train[size_t(val[i])])
      throw UsageError(cat(val_file, ", line ", i + 1, ": row index ", val[i], " is also in the training split (",
                           train_file, "): the splits must not overlap"));
  return {select_rows(all.images, train), select_rows(all.labels, train), select_rows(all.images, val),
          select_rows(all.labels, val)};
}

}  // namespace minidl::data
