#pragma once
// The lesson's data: scikit-learn's handwritten digits (data/digits.csv) and its
// train/validation split (data/digits_{train,test}_indices.txt). See data/README.md.
#include <cstdint>
#include <string>
#include <vector>

#include "minidl/tensor/tensor.hpp"

namespace minidl::data {

struct Digits {
  Tensor images;  // (rows, 64) pixel counts / 16.0, so in 0..1
  Tensor labels;  // (rows) the digit 0..9, stored as float
};

/// Reads digits.csv: per line 64 pixel counts 0..16 then the label 0..9, comma-separated,
/// no header. Throws UsageError naming the file, line and column of the first problem.
Digits read_digits_csv(const std::string& path);
/// read_digits_csv on text in memory; `name` stands for the file in messages.
Digits parse_digits_csv(std::string text, const std::string& name);

/// Reads a split file: one 0-based row index of digits.csv per line, each below rows and
/// none twice. Throws UsageError naming the file, line and column of the first problem.
std::vector<int64_t> read_split_indices(const std::string& path, int64_t rows);
/// read_split_indices on text in memory; `name` stands for the file in messages.
std::vector<int64_t> parse_split_indices(std::string text, const std::string& name, int64_t rows);

/// The lesson's X_train, y_train, X_val, y_val, in the split files' order.
struct DigitsSplit {
  Tensor X_train;  // (1437, 64)
  Tensor y_train;  // (1437)
  Tensor X_val;    // (360, 64)
  Tensor y_val;    // (360)
};

/// Reads digits.csv, digits_train_indices.txt and digits_test_indices.txt from data_dir.
DigitsSplit load_digits(const std::string& data_dir);

}  // namespace minidl::data
