// kernels::column_sums, the Linear bias gradient: against a double loop written here and
// bit for bit against sum_to_shape, on widths below, at and across its 256-column blocks.
#include <catch2/catch.hpp>
#include <vector>

#include "kernels/broadcast.hpp"
#include "kernels/column_sums.hpp"
#include "minidl/minidl.hpp"

using namespace minidl;

TEST_CASE("column_sums sums each column in double, as sum_to_shape does", "[kernels]") {
  Generator gen(11);
  for (const auto& [rows, cols] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {64, 64}, {3, 256}, {513, 700}, {0, 5}}) {
    const Tensor in = Tensor::randn({rows, cols}, gen, 0.5f, 3.0f);  // (rows, cols)
    std::vector<float> sums(size_t(cols), -1.0f), reference(size_t(cols), -1.0f);
    kernels::column_sums(in.data(), rows, cols, sums.data());
    kernels::sum_to_shape(in.data(), in.shape(), reference.data(), {1, cols});
    INFO("rows " << rows << ", cols " << cols);
    for (int64_t j = 0; j < cols; ++j) {
      double expected = 0.0;
      for (int64_t i = 0; i < rows; ++i) expected += double(in.data()[i * cols + j]);
      REQUIRE(sums[size_t(j)] == float(expected));
      REQUIRE(sums[size_t(j)] == reference[size_t(j)]);
    }
  }
}
