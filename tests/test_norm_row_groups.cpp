// The row kernels' grouped paths (src/kernels/norm/row_norm.cpp: the backward sums 8 rows
// together through lane_sums8, a batch of a few rows goes row by row, and the op keeps up
// to 8 rows' statistics inline) against the composites of primitives, and against
// themselves row by row, on widths around the 8- and 16-value vector steps and row counts
// on both sides of a group.
#include "support/check.hpp"
#include "support/norm_reference.hpp"

namespace test_norm_row_groups {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::random_normal;

namespace {

constexpr int64_t kWidths[] = {1, 7, 63, 64, 65, 130};

using NormFn = std::function<Tensor(const std::vector<Tensor>&)>;

// The fused op and its composite on inputs (x, weight[, bias]): output and every gradient.
// Tolerances: each value is a handful of float32 roundings of O(1) terms, and each sum has
// at most 130 terms, so two orders of the same sums differ by about 130 * 2^-24 of their
// terms (1e-5); dx also subtracts two such sums.
void check_against_composite(const NormFn& fused, const NormFn& composite, const std::vector<Tensor>& inputs) {
  const auto a = minidl::testing::gradients(fused, inputs), b = minidl::testing::gradients(composite, inputs);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("result " << i << " (0 = output, then dx, dweight[, dbias])");
    if (i == 0) check_close(a[i], b[i], 2e-5, 1e-5);
    else check_close(a[i], b[i], 5e-5, 1e-4);
  }
}

// Row r of x (rows, width) as its own (1, width) tensor.
Tensor row_of(const Tensor& x, int64_t r) {
  const int64_t width = x.size(1);
  std::vector<float> values(x.data() + r * width, x.data() + (r + 1) * width);
  return Tensor::from_vector(values, {1, width});
}

}  // namespace

TEST_CASE("LayerNorm and RMSNorm on odd widths and 1..9 rows match their composites", "[norm][row_groups]") {
  for (int64_t width : kWidths) {
    for (int64_t rows = 1; rows <= 9; ++rows) {
      INFO("x (" << rows << ", " << width << ")");
      const Shape shape{rows, width}, normalized{width};
      const uint64_t seed = uint64_t(100 * width + rows);
      const Tensor x = random_normal(shape, seed, 0.5f, 2.0f);
      const Tensor weight = random_normal(normalized, seed + 1, 1.0f, 0.5f);
      const Tensor bias = random_normal(normalized, seed + 2);
      check_against_composite(
          [&](const std::vector<Tensor>& in) { return layer_norm(in[0], normalized, in[1], in[2]); },
          [&](const std::vector<Tensor>& in) { return composite::layer_norm(in[0], normalized, in[1], in[2]); },
          {x, weight, bias});
      check_against_composite(
          [&](const std::vector<Tensor>& in) { return rms_norm(in[0], normalized, in[1]); },
          [&](const std::vector<Tensor>& in) { return composite::rms_norm(in[0], normalized, in[1]); }, {x, weight});
    }
  }
}

TEST_CASE("LayerNorm and RMSNorm give each row the same bits in a group of rows as alone", "[norm][row_groups]") {
  // A row's output and input gradient depend on that row only: summed with 7 others (the
  // grouped backward) they must be the bits it gets alone (row by row).
  for (int64_t width : kWidths) {
    for (bool centered : {true, false}) {
      INFO("width " << width << (centered ? " LayerNorm" : " RMSNorm"));
      const int64_t rows = 9;  // a full group of 8 and one row on its own
      const Shape normalized{width};
      const Tensor x = random_normal({rows, width}, 7 + uint64_t(width), 1e2f, 1.0f);
      const Tensor dy = random_normal({rows, width}, 8 + uint64_t(width));
      const Tensor weight = random_normal(normalized, 9, 1.0f, 0.5f);
      const Tensor bias = random_normal(normalized, 10);
      auto run = [&](const Tensor& input, const Tensor& grad) {
        Tensor leaf = input.clone().detach().requires_grad_(true);
        Tensor w = weight.clone().detach().requires_grad_(true);
        Tensor out = centered ? layer_norm(leaf, normalized, w, bias) : rms_norm(leaf, normalized, w);
        out.backward(grad);
        return std::pair<Tensor, Tensor>{out.detach(), leaf.grad()};
      };
      const auto all = run(x, dy);
      for (int64_t r = 0; r < rows; ++r) {
        INFO("row " << r);
        const auto alone = run(row_of(x, r), row_of(dy, r));
        CHECK(std::equal(alone.first.data(), alone.first.data() + width, all.first.data() + r * width));
        CHECK(std::equal(alone.second.data(), alone.second.data() + width, all.second.data() + r * width));
      }
    }
  }
}

}  // namespace test_norm_row_groups
