// libFuzzer target: the digits.csv reader (64 pixel counts and a label per line).
#include "fuzz_support.hpp"
#include "data/digits.hpp"

using namespace minidl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expect_value_or_usage_error([&] {
    data::Digits d = data::parse_digits_csv(fuzz::as_text(data, size), fuzz::kName);
    const int64_t rows = d.labels.size(0);
    fuzz::require(d.images.shape() == Shape{rows, 64}, "images are not (rows, 64)");
    for (float v : d.images.to_vector()) fuzz::require(v >= 0.0f && v <= 1.0f, cat("pixel ", v, " outside 0..1"));
    for (float v : d.labels.to_vector())
      fuzz::require(v >= 0.0f && v <= 9.0f && v == float(int(v)), cat("label ", v, " is not 0..9"));
  });
  return 0;
}
