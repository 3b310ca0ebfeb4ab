// Winograd F(2x2, 3x3) against the reference path (im2col + sgemm): the forward and every
// gradient on many shapes, each path's kernels called directly; conv2d on shapes its rule
// sends to Winograd; and the rule that picks the path.
//
// Tolerances, from float32's unit roundoff u = 2^-24 and first-order bounds |error| <=
// depth * u * (sum of the magnitudes of the terms), with X = max|x|, W = max|w|, D = max|dout|:
//   reference forward: depth 9 Cin, magnitudes <= 9 Cin X W.
//   Winograd forward: depth Cin + 11 (the weight transform 4, the input transform 2, the
//     product 1, the sum over Cin, the output transform 4), magnitudes <= 64 Cin X W: a
//     tile's output expands into terms of |A^T| (|G| |g| |G^T| .* |B^T| |d| |B|) |A|, whose
//     coefficients sum to 64 for each output (9 for the direct sum): 64/9 = 7.1x.
//   input gradient: the same with Cout for Cin and W D; the adjoint's coefficients also sum
//     to 64 (8 per axis: the two tiles over each input, 1 + 7).
//   weight gradient: reference depth and magnitudes P = N OH OW (positions), P X D; Winograd
//     depth T + 12 (T tiles, plus the chunks' accumulation), magnitudes <= 36 T X D (the
//     coefficients of G^T (|A| |dY| |A^T| .* |B^T| |d| |B|) G sum to 36 for the corner weights).
// The tolerance is the sum of both paths' bounds.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/conv/conv2d.hpp"
#include "kernels/conv/conv2d_path.hpp"
#include "kernels/conv/winograd.hpp"
#include "minidl/minidl.hpp"
#include "support/check.hpp"

namespace test_conv_winograd {

using namespace minidl;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

namespace {

constexpr double kUnitRoundoff = 1.0 / (1 << 24);

double max_abs(const Tensor& t) {
  double m = 0.0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, double(std::abs(t.data()[i])));
  return m;
}

struct Tolerances {
  double out, dx, dw;
};

Tolerances tolerances(const kernels::Conv2dGeometry& g, double x, double w, double d, double b) {
  const double cin = double(g.in_channels), cout = double(g.out_channels);
  const double positions = double(g.batch * g.positions());
  const double tiles = double(g.batch * ((g.out_h() + 1) / 2) * ((g.out_w() + 1) / 2));
  const double u = kUnitRoundoff;
  return {u * x * w * cin * (81.0 * cin + 64.0 * (cin + 11.0)) + 2.0 * u * b,
          u * w * d * cout * (9.0 * (cout + 9.0) + 64.0 * (cout + 12.0)),
          u * x * d * (positions * positions + 36.0 * tiles * (tiles + 12.0))};
}

// Both paths' forward and backward on random data, with a bias or none; every result within
// its tolerance.
void check_paths_agree(const kernels::Conv2dGeometry& g, uint64_t seed, bool with_bias = true) {
  REQUIRE(kernels::winograd_applies(g));
  Generator gen(seed);
  const Tensor x = Tensor::randn({g.batch, g.in_channels, g.in_h, g.in_w}, gen);
  const Tensor w = Tensor::randn({g.out_channels, g.in_channels, 3, 3}, gen);
  const Tensor b = with_bias ? Tensor::randn({g.out_channels}, gen) : Tensor::zeros({g.out_channels});
  const Tensor dout = Tensor::randn({g.batch, g.out_channels, g.out_h(), g.out_w()}, gen);
  const Tolerances tol = tolerances(g, max_abs(x), max_abs(w), max_abs(dout), max_abs(b));
  Tensor out = Tensor::full(dout.shape(), NAN), ref = Tensor::empty(dout.shape());
  kernels::winograd_forward(g, x.data(), w.data(), with_bias ? b.data() : nullptr, out.data());
  kernels::conv2d_forward(g, x.data(), w.data(), with_bias ? b.data() : nullptr, ref.data());
  check_close(out, ref, tol.out, 0.0);
  Tensor dx = Tensor::full(x.shape(), NAN), dw = Tensor::full(w.shape(), NAN), db = Tensor::full(b.shape(), NAN);
  Tensor dx_ref = Tensor::empty(x.shape()), dw_ref = Tensor::empty(w.shape()), db_ref = Tensor::empty(b.shape());
  kernels::winograd_backward(g, x.data(), w.data(), dout.data(), dx.data(), dw.data(), db.data());
  kernels::conv2d_backward(g, x.data(), w.data(), dout.data(), dx_ref.data(), dw_ref.data(), db_ref.data());
  check_close(dx, dx_ref, tol.dx, 0.0);
  check_close(dw, dw_ref, tol.dw, 0.0);
  check_close(db, db_ref, 0.0, 0.0);  // the same function sums it
}

kernels::Conv2dGeometry geometry(int64_t batch, int64_t cin, int64_t cout, int64_t h, int64_t w, int64_t pad) {
  return {.batch = batch,
          .in_channels = cin,
          .in_h = h,
          .in_w = w,
          .out_channels = cout,
          .kernel_h = 3,
          .kernel_w = 3,
          .pad_h = pad,
          .pad_w = pad};
}

}  // namespace

TEST_CASE("Winograd F(2x2, 3x3) equals im2col + sgemm on every image size up to 9x11, padding 0-2",
          "[conv][winograd]") {
  // Channels 1, 3, 16, 17 in and out, batch 1 to 3; odd outputs take the partial tiles.
  const std::vector<std::pair<int64_t, int64_t>> channels{{1, 3}, {3, 16}, {16, 17}, {17, 1}, {16, 16}};
  uint64_t seed = 0;
  for (int64_t pad = 0; pad <= 2; ++pad)
    for (int64_t h = 1; h <= 9; ++h)
      for (int64_t w = 1; w <= 11; ++w) {
        if (h + 2 * pad < 3 || w + 2 * pad < 3) continue;  // no output
        const auto& c = channels[seed % channels.size()];
        const kernels::Conv2dGeometry g = geometry(int64_t(1 + seed % 3), c.first, c.second, h, w, pad);
        INFO("batch " << g.batch << " channels " << c.first << " -> " << c.second << " image " << h << "x" << w
                      << " padding " << pad);
        check_paths_agree(g, ++seed);
      }
}

TEST_CASE("Winograd's gradients hold across several chunks and wide padding", "[conv][winograd]") {
  // 16 x 16 x 256 transformed values an image: 4 images a chunk, so 7 make chunks of 4 and 3
  // and the weight gradient accumulates over both.
  const kernels::Conv2dGeometry g = geometry(7, 16, 16, 32, 32, 1);
  REQUIRE(kernels::winograd_chunk(g) == 4);
  check_paths_agree(g, 101);
  check_paths_agree(geometry(2, 5, 4, 4, 3, 4), 102);  // padding past the kernel's reach
  check_paths_agree(geometry(1, 2, 3, 1, 9, 3), 103);
}

TEST_CASE("Winograd's kernels match the reference path without a bias", "[conv][winograd]") {
  check_paths_agree(geometry(1, 7, 4, 3, 6, 1), 104, false);
  check_paths_agree(geometry(3, 3, 2, 5, 5, 2), 105, false);
  check_paths_agree(geometry(1, 1, 3, 1, 1, 1), 106, false);
}

TEST_CASE("conv2d takes Winograd only for 3x3 stride-1 convolutions the rule picks", "[conv][winograd]") {
  kernels::Conv2dGeometry g = geometry(32, 64, 64, 32, 32, 1);
  CHECK(kernels::conv2d_path(g) == kernels::Conv2dPath::Winograd);  // the benchmark's layer
  g.stride_h = 2;
  CHECK_FALSE(kernels::winograd_applies(g));
  CHECK(kernels::conv2d_path(g) == kernels::Conv2dPath::Im2col);
  CHECK(kernels::conv2d_path(geometry(4, 8, 8, 16, 16, 1)) == kernels::Conv2dPath::Winograd);  // the rule's corner
  CHECK(kernels::conv2d_path(geometry(4, 8, 8, 16, 15, 1)) == kernels::Conv2dPath::Im2col);
  CHECK(kernels::conv2d_path(geometry(4, 7, 8, 16, 16, 1)) == kernels::Conv2dPath::Im2col);
  CHECK(kernels::conv2d_path(geometry(64, 1, 16, 8, 8, 1)) == kernels::Conv2dPath::Im2col);   // the digits' conv1
  CHECK(kernels::conv2d_path(geometry(64, 32, 32, 4, 4, 1)) == kernels::Conv2dPath::Im2col);  // and conv3
}

TEST_CASE("the rule takes Winograd for the conv2d_winograd_rule fixture", "[conv][winograd]") {
  CHECK(kernels::conv2d_path(geometry(1, 8, 8, 16, 17, 1)) == kernels::Conv2dPath::Winograd);
}

TEST_CASE("conv2d's gradients on the Winograd path match finite differences", "[conv][winograd][gradcheck]") {
  Generator gen(23);
  for (int64_t pad : {1, 2}) {  // 8 channels and outputs of 16x16 or more: the rule takes Winograd
    DYNAMIC_SECTION("padding " << pad) {
      REQUIRE(kernels::conv2d_path(geometry(1, 8, 8, 16, 16, pad)) == kernels::Conv2dPath::Winograd);
      const Tensor x = Tensor::randn({1, 8, 16, 16}, gen), w = Tensor::randn({8, 8, 3, 3}, gen);
      const Tensor b = Tensor::randn({8}, gen);
      check_gradients([&](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], in[2], 1, pad); }, {x, w, b},
                      testing::kLinearStep);
    }
  }
}

// On several threads each thread takes whole point products (one OpenBLAS thread each): the
// products and, per point, the order of the chunks are those of one thread, so are the bits.
TEST_CASE("conv2d on the Winograd path gives identical bits with 1 and 4 threads", "[conv][winograd][threads]") {
  Generator gen(5);
  REQUIRE(kernels::conv2d_path(geometry(3, 32, 32, 32, 32, 1)) == kernels::Conv2dPath::Winograd);
  // 32 channels of 32 x 32: 2 images a chunk, so 3 images make 2 chunks and the weight
  // gradient sums chunk after chunk.
  const Tensor x = Tensor::randn({3, 32, 32, 32}, gen), w = Tensor::randn({32, 32, 3, 3}, gen);
  const Tensor b = Tensor::randn({32}, gen), g = Tensor::randn({3, 32, 32, 32}, gen);
  REQUIRE(kernels::winograd_chunk(geometry(3, 32, 32, 32, 32, 1)) == 2);
  std::vector<Tensor> results[2];
  const int before = get_num_threads();
  for (int run = 0; run < 2; ++run) {
    set_num_threads(run == 0 ? 1 : 4);
    Tensor xl = x.clone().requires_grad_(), wl = w.clone().requires_grad_(), bl = b.clone().requires_grad_();
    const Tensor out = conv2d(xl, wl, bl, 1, 1);
    (out * g).sum().backward();
    results[run] = {out, xl.grad(), wl.grad(), bl.grad()};
  }
  set_num_threads(before);
  for (size_t i = 0; i < results[0].size(); ++i) check_close(results[1][i], results[0][i], 0.0, 0.0);
}

}  // namespace test_conv_winograd
