// libFuzzer target: the batch-order reader (one permutation of 0..examples-1 per epoch).
#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "fuzz_support.hpp"
#include "data/batch_order.hpp"

using namespace minidl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // (examples, epochs) pairs the corpus's files are written for, and edge cases.
  for (std::pair<int64_t, int64_t> shape : {std::pair<int64_t, int64_t>{10, 2}, {3, 1}, {1, 3}, {0, 1}}) {
    const int64_t examples = shape.first, epochs = shape.second;
    fuzz::expect_value_or_usage_error([&] {
      auto orders = data::parse_batch_order(fuzz::as_text(data, size), fuzz::kName, examples, epochs);
      fuzz::require(int64_t(orders.size()) == epochs, "wrong number of epochs returned");
      std::vector<int64_t> identity(static_cast<size_t>(examples));
      std::iota(identity.begin(), identity.end(), 0);
      for (auto order : orders) {
        std::sort(order.begin(), order.end());
        fuzz::require(order == identity, "an epoch's order is not a permutation");
      }
    });
  }
  return 0;
}
