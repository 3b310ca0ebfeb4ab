// libFuzzer target: the split-file reader (one row index per line, each below rows, no repeats).
#include <vector>

#include "fuzz_support.hpp"
#include "data/digits.hpp"

using namespace minidl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (int64_t rows : {0, 5, 1797}) {
    fuzz::expect_value_or_usage_error([&] {
      std::vector<int64_t> indices = data::parse_split_indices(fuzz::as_text(data, size), fuzz::kName, rows);
      std::vector<bool> seen(size_t(rows), false);
      for (int64_t i : indices) {
        fuzz::require(i >= 0 && i < rows, cat("index ", i, " outside 0..", rows - 1));
        fuzz::require(!seen[size_t(i)], cat("index ", i, " returned twice"));
        seen[size_t(i)] = true;
      }
    });
  }
  return 0;
}
