// kernels::column_sums, the Linear bias gradient: against a double loop written here and
// bit for bit against sum_to_shape, on widths below, at and across its 256-column blocks;
// and add_row_to_rows, its forward.
#include <algorithm>
#include <catch2/catch.hpp>
#include <tuple>
#include <vector>

#include "kernels/broadcast.hpp"
#include "kernels/column_sums.hpp"
#include "kernels/gemm.hpp"
#include "minidl/minidl.hpp"

namespace test_column_sums {

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

// The Linear forward's bias: sgemm with beta 0, then add_row_to_rows, against PyTorch's
// addmm order (every row starts as the bias, sgemm with beta 1 adds x W^T onto it): the same
// bits while sgemm sums K in one block, which holds for these K under every core type.
TEST_CASE("add_row_to_rows after sgemm gives the bits of sgemm onto rows that start as the bias", "[kernels]") {
  Generator gen(12);
  for (const auto& [rows, cols, k] :
       std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 1, 1}, {64, 64, 64}, {7, 10, 33}, {130, 19, 64}}) {
    const Tensor x = Tensor::randn({rows, k}, gen), w = Tensor::randn({cols, k}, gen);
    const Tensor b = Tensor::randn({cols}, gen, 0.0f, 4.0f);
    std::vector<float> added(size_t(rows * cols)), addmm(size_t(rows * cols));
    kernels::gemm(false, true, rows, cols, k, 1.0f, x.data(), w.data(), 0.0f, added.data());
    kernels::add_row_to_rows(added.data(), b.data(), rows, cols);
    for (int64_t i = 0; i < rows; ++i) std::copy_n(b.data(), cols, addmm.data() + i * cols);
    kernels::gemm(false, true, rows, cols, k, 1.0f, x.data(), w.data(), 1.0f, addmm.data());
    INFO("rows " << rows << ", cols " << cols << ", k " << k);
    for (size_t i = 0; i < added.size(); ++i) REQUIRE(added[i] == addmm[i]);
  }
}

}  // namespace test_column_sums
