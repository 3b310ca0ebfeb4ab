#pragma once
// The project's data (data/), each set read once per test program.
#include <string>

#include "data/digits.hpp"
#include "data/words.hpp"

namespace minidl::testing {

/// data/: the digits and their split, the word list.
inline const std::string kDataDir = std::string(MINIDL_SOURCE_DIR) + "/data";

/// The 8x8 digits in the lesson's split.
inline const data::DigitsSplit& digits_split() {
  static const data::DigitsSplit split = data::load_digits(kDataDir);
  return split;
}

/// The word list in its train and validation halves, words of up to 31 letters (charlm's block of 32).
inline const charlm::WordSplit& words_split() {
  static const charlm::WordSplit split = charlm::load_split(kDataDir + "/words.txt", 31);
  return split;
}

}  // namespace minidl::testing
