// The digits readers and the batch-order reader: the real files, and every malformed
// input with the file, line and column in its message.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/batch_order.hpp"
#include "data/digits.hpp"
#include "support/check.hpp"
#include "support/datasets.hpp"
#include "support/temp_dir.hpp"

namespace test_digits_reader {

using namespace minidl;
using minidl::testing::kDataDir;
using minidl::testing::TempDir;

namespace {

// A valid digits.csv line: pixel j is (j + shift) % 17, then the label.
std::string row(int shift, int label) {
  std::string line;
  for (int j = 0; j < 64; ++j) line += std::to_string((j + shift) % 17) + ",";
  return line + std::to_string(label) + "\n";
}

// row() with column `column` (1-based) replaced by text.
std::string row_with(int column, const std::string& text) {
  std::string line = row(0, 3);
  line.pop_back();
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, ',');) fields.push_back(f);
  fields[size_t(column - 1)] = text;
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + fields[i];
  return out + "\n";
}

std::string read_line(const std::string& path, int64_t number) {
  std::ifstream in(path);
  std::string line;
  for (int64_t i = 0; i <= number; ++i) std::getline(in, line);
  return line;
}

}  // namespace

TEST_CASE("load_digits reads the lesson's split in the split files' order", "[data]") {
  data::DigitsSplit d = data::load_digits(kDataDir);
  REQUIRE(d.X_train.shape() == Shape{1437, 64});
  REQUIRE(d.y_train.shape() == Shape{1437});
  REQUIRE(d.X_val.shape() == Shape{360, 64});
  REQUIRE(d.y_val.shape() == Shape{360});
  // X_train[0] is row 1109 of digits.csv (the first line of the train split), / 16.
  const std::string first_index = read_line(kDataDir + "/digits_train_indices.txt", 0);
  const std::string csv_line = read_line(kDataDir + "/digits.csv", std::stoll(first_index));
  std::vector<float> expected;
  std::stringstream fields(csv_line);
  for (std::string f; std::getline(fields, f, ',');) expected.push_back(std::stof(f));
  for (int64_t j = 0; j < 64; ++j) CHECK(d.X_train.at({0, j}) == expected[size_t(j)] / 16.0f);
  CHECK(d.y_train.at({0}) == expected[64]);
  for (float v : d.X_train.to_vector()) REQUIRE((v >= 0.0f && v <= 1.0f));
  for (float v : d.y_val.to_vector()) REQUIRE((v >= 0.0f && v <= 9.0f && v == float(int(v))));
}

TEST_CASE("read_digits_csv names file, line and column of a malformed value", "[data]") {
  TempDir dir;
  auto check = [&](const std::string& second_line, const std::string& where, const std::string& what) {
    const std::string path = dir.write("digits.csv", row(1, 2) + second_line + row(2, 4));
    REQUIRE_THROWS_AS(data::read_digits_csv(path), UsageError);
    REQUIRE_THROWS_WITH(data::read_digits_csv(path),
                        Catch::Contains(path + ", line 2" + where) && Catch::Contains(what));
  };
  check(row_with(7, ""), ", column 7", "missing value");
  check(row_with(7, "abc"), ", column 7", "\"abc\" is not a number");
  check(row_with(12, "17"), ", column 12", "pixel value 17 is outside 0..16");
  check(row_with(3, "-1"), ", column 3", "pixel value -1 is outside 0..16");
  check(row_with(65, "10"), ", column 65", "label 10 is outside 0..9");
  check(row_with(65, "3.5"), ", column 65", "\"3.5\" is not an integer");
  // Only plain decimal integers: other spellings of a valid count are refused, not guessed at.
  check(row_with(4, "0.5"), ", column 4", "\"0.5\" is not a plain integer (expected a pixel count 0..16 in digits)");
  check(row_with(4, "1e1"), ", column 4", "\"1e1\" is not a plain integer");
  check(row_with(4, "-0"), ", column 4", "\"-0\" is not a plain integer");
  check(row_with(4, "+3"), ", column 4", "\"+3\" is not a plain integer");
  check(row_with(65, "+3"), ", column 65", "\"+3\" is not a plain integer (expected the label 0..9 as a digit)");
  check(row_with(65, "-0"), ", column 65", "\"-0\" is not a plain integer");
  // Control bytes are shown escaped, so the message stays one whole line.
  check(row_with(9, std::string("1\0"
                                "2",
                                3)),
        ", column 9", "\"1\\02\" is not a number");
  check(row_with(9, "\x01x"), ", column 9", "\"\\x01x\" is not a number");
  check(row_with(65, ""), ", column 65", "missing value");
  check("1,2,3\n", "", "expected 65 comma-separated columns (64 pixels and the label), got 3");
  check(row_with(65, "1,5"), "", "got 66");
  check("\n", "", "got 1");  // a blank line inside the file
}

TEST_CASE("read_digits_csv reads values, tolerates CRLF and a trailing newline", "[data]") {
  TempDir dir;
  std::string crlf = row(5, 9);
  crlf.back() = '\r';  // row() ends in "\n": make it "\r\n"
  crlf.push_back('\n');
  const std::string path = dir.write("digits.csv", row(0, 0) + crlf + "\n\n");
  data::Digits d = data::read_digits_csv(path);
  REQUIRE(d.images.shape() == Shape{2, 64});
  CHECK(d.images.at({1, 0}) == 5.0f / 16.0f);
  CHECK(d.images.at({0, 16}) == 1.0f);
  CHECK(d.labels.to_vector() == std::vector<float>{0, 9});
}

TEST_CASE("read_digits_csv counts a long line's columns without storing them", "[data]") {
  TempDir dir;
  std::string line(1'000'000, ',');
  line += '\n';  // appended, not `+ "\n"`: GCC 12 optimizing takes that for an overflow
  const std::string path = dir.write("digits.csv", line);
  REQUIRE_THROWS_WITH(data::read_digits_csv(path), Catch::Contains("got 1000001"));
}

TEST_CASE("the readers refuse a line longer than 1 MiB at that line, without reading it whole", "[data]") {
  TempDir dir;
  const std::string too_long = std::string(size_t(1) << 20, '1') + "1";
  const std::string message =
      ": the line is longer than 1048576 bytes (1 MiB), more than any line of a data file "
      "minidl reads";
  const std::string csv = dir.write("digits.csv", row(0, 1) + "\n" + too_long + "\n");
  REQUIRE_THROWS_AS(data::read_digits_csv(csv), UsageError);
  REQUIRE_THROWS_WITH(data::read_digits_csv(csv), csv + ", line 3" + message);
  const std::string split = dir.write("split.txt", too_long);  // no line end at all
  REQUIRE_THROWS_WITH(data::read_split_indices(split, 10), split + ", line 1" + message);
  const std::string order = dir.write("order.txt", "0,1,2,3\n" + too_long);
  REQUIRE_THROWS_WITH(data::read_batch_order(order, 4, 2), order + ", line 2" + message);
  // A line of exactly 1 MiB is read (and refused for what it holds).
  const std::string longest = dir.write("longest.txt", std::string(size_t(1) << 20, '1') + "\n");
  REQUIRE_THROWS_WITH(data::read_split_indices(longest, 10), Catch::Contains("line 1, column 1: \"1111"));
}

TEST_CASE("the readers refuse a directory and a file too large to be data, naming them", "[data]") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("sub"));
  REQUIRE_THROWS_WITH(data::read_digits_csv(dir.file("sub")),
                      Catch::Contains(dir.file("sub") + ": is a directory, not a file"));
  REQUIRE_THROWS_WITH(data::read_split_indices(dir.file("sub"), 5), Catch::Contains("is a directory"));
  const std::string big = dir.write("big.csv", std::string((size_t(64) << 20) + 1, '1'));
  REQUIRE_THROWS_WITH(data::read_digits_csv(big),
                      Catch::Contains(big + ": the file holds more than 67108864 bytes (64 MiB)"));
}

TEST_CASE("load_digits refuses training and validation splits that share an example", "[data]") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("d"));
  std::string csv;
  for (int i = 0; i < 4; ++i) csv += row(i, i);
  dir.write("d/digits.csv", csv);
  dir.write("d/digits_train_indices.txt", "0\n1\n2\n");
  dir.write("d/digits_test_indices.txt", "3\n1\n");
  REQUIRE_THROWS_WITH(data::load_digits(dir.file("d")),
                      Catch::Contains("digits_test_indices.txt, line 2: row index 1 is also in the training split"));
}

TEST_CASE("read_digits_csv refuses an empty or missing file", "[data]") {
  TempDir dir;
  const std::string empty = dir.write("empty.csv", "");
  REQUIRE_THROWS_WITH(data::read_digits_csv(empty), Catch::Contains(empty) && Catch::Contains("empty"));
  const std::string blank = dir.write("blank.csv", "\n \n");
  REQUIRE_THROWS_WITH(data::read_digits_csv(blank), Catch::Contains("empty"));
  const std::string missing = dir.file("nope.csv");
  REQUIRE_THROWS_AS(data::read_digits_csv(missing), UsageError);
  REQUIRE_THROWS_WITH(data::read_digits_csv(missing), Catch::Contains(missing) && Catch::Contains("cannot open"));
}

TEST_CASE("read_split_indices names file, line and column of a bad index", "[data]") {
  TempDir dir;
  auto check = [&](const std::string& text, const std::string& what) {
    const std::string path = dir.write("split.txt", text);
    REQUIRE_THROWS_AS(data::read_split_indices(path, 10), UsageError);
    REQUIRE_THROWS_WITH(data::read_split_indices(path, 10), Catch::Contains(path) && Catch::Contains(what));
  };
  check("3\n10\n", "line 2, column 1: row index 10 is out of range: the data has 10 rows (0..9)");
  check("3\n-1\n", "line 2, column 1: row index -1 is out of range");
  check("3\n4\nx7\n", "line 3, column 1: \"x7\" is not an integer row index");
  check("3\n2.5\n", "line 2, column 1: \"2.5\" is not an integer");
  check("3\n\n4\n", "line 2, column 1: missing value");
  check("3\n4,5\n", "line 2: expected one row index per line, got 2 columns");
  check("3\n4\n3\n", "line 3, column 1: row index 3 already appeared on line 1");
  check("", "the file is empty");
  CHECK(data::read_split_indices(dir.write("ok.txt", "9\n0\n 4 \n"), 10) == std::vector<int64_t>{9, 0, 4});
}

TEST_CASE("load_digits names the split file it cannot find", "[data]") {
  TempDir dir;
  dir.write("digits.csv", row(0, 1));
  REQUIRE_THROWS_WITH(data::load_digits(dir.path().string()),
                      Catch::Contains("digits_train_indices.txt") && Catch::Contains("cannot open"));
}

TEST_CASE("read_batch_order reads one permutation per epoch", "[data]") {
  TempDir dir;
  auto orders = data::read_batch_order(dir.write("order.txt", "2,0,1,3\n3 1 0 2\n"), 4, 2);
  CHECK(orders == std::vector<std::vector<int64_t>>{{2, 0, 1, 3}, {3, 1, 0, 2}});
}

TEST_CASE("read_batch_order names file, line and column of what is not a permutation", "[data]") {
  TempDir dir;
  auto check = [&](const std::string& text, int64_t epochs, const std::string& what) {
    const std::string path = dir.write("order.txt", text);
    REQUIRE_THROWS_AS(data::read_batch_order(path, 4, epochs), UsageError);
    REQUIRE_THROWS_WITH(data::read_batch_order(path, 4, epochs), Catch::Contains(path) && Catch::Contains(what));
  };
  check("0,1,2,3\n0,1,2\n", 2, "line 2: expected 4 indices (a permutation of 0..3), got 3");
  check("0,1,2,3\n0,1,2,3,0\n", 2, "line 2, column 5: index 0 appears twice (first in column 1)");
  check("0,1,2,3\n0,1,1,3\n", 2, "line 2, column 3: index 1 appears twice");
  check("0,1,4,3\n", 1, "line 1, column 3: index 4 is out of range 0..3");
  check("0,1,-2,3\n", 1, "line 1, column 3: index -2 is out of range");
  check("0,1,two,3\n", 1, "line 1, column 3: \"two\" is not an integer index");
  check("0,1,2,3\n", 2, "expected 2 lines (one per epoch), got 1");
  check("0,1,2,3\n1,0,2,3\n3,2,1,0\n", 2, "line 3: expected 2 lines (one per epoch), but the file has more");
  check("0,1,2,3\n\n1,0,2,3\n", 2, "line 2: expected 4 indices");
  check("", 1, "the file is empty");
  const std::string missing = dir.file("none.txt");
  REQUIRE_THROWS_WITH(data::read_batch_order(missing, 4, 1),
                      Catch::Contains(missing) && Catch::Contains("cannot open"));
}

}  // namespace test_digits_reader
