// Conv2d, the pooling layers and Flatten: against PyTorch 1.13 on the fixtures of
// scripts/fixtures/conv.py (outputs and every gradient), by finite differences
// (autograd::gradcheck), the im2col path against the direct loop on the chunk sizes the
// fixtures do not reach, and every error's message.
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>

#include "kernels/conv/conv2d.hpp"
#include "minidl/minidl.hpp"
#include "support/check.hpp"
#include "support/fixture.hpp"

namespace test_conv {

using namespace minidl;
using minidl::testing::check_call;
using minidl::testing::check_close;
using minidl::testing::check_gradients;
using minidl::testing::Fixture;
using minidl::testing::fixtures_of;

namespace {

Size2 size2(const nlohmann::json& pair) { return {pair.at(0).get<int64_t>(), pair.at(1).get<int64_t>()}; }

// Distinct values 0.1 apart in a shuffled order: a central difference of step 1e-2 never
// moves a max-pool window's argmax.
Tensor spread_values(const Shape& shape, uint64_t seed) {
  std::vector<float> v(size_t(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1f * float(i) - 0.05f * float(v.size());
  Generator gen(seed);
  const Tensor keys = Tensor::rand(shape, gen);
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys.data()[a] < keys.data()[b]; });
  std::vector<float> shuffled(v.size());
  for (size_t i = 0; i < v.size(); ++i) shuffled[order[i]] = v[i];
  return Tensor::from_vector(shuffled, shape);
}

}  // namespace

TEST_CASE("fixtures: Conv2d matches PyTorch for every option, odd sizes, groups and unbatched input",
          "[fixtures][conv]") {
  for (const Fixture& fx : fixtures_of("Conv2d")) {
    DYNAMIC_SECTION(fx.name()) {
      const auto& o = fx.options();
      nn::Conv2d conv(nn::Conv2dOptions(o.at("in_channels"), o.at("out_channels"), size2(o.at("kernel_size")))
                          .stride(size2(o.at("stride")))
                          .padding(size2(o.at("padding")))
                          .dilation(size2(o.at("dilation")))
                          .groups(o.at("groups"))
                          .bias(o.at("bias")));
      conv.load_state_dict(fx.state_for(conv));
      check_call(
          fx, "", [&](const Tensor& x) { return conv(x); }, conv.named_parameters());
    }
  }
}

TEST_CASE("fixtures: MaxPool2d matches PyTorch, ties and dilation included", "[fixtures][conv]") {
  for (const Fixture& fx : fixtures_of("MaxPool2d")) {
    DYNAMIC_SECTION(fx.name()) {
      const auto& o = fx.options();
      nn::MaxPool2d pool(nn::MaxPool2dOptions(size2(o.at("kernel_size")))
                             .stride(size2(o.at("stride")))
                             .padding(size2(o.at("padding")))
                             .dilation(size2(o.at("dilation"))));
      check_call(fx, "", [&](const Tensor& x) { return pool(x); });
    }
  }
}

TEST_CASE("fixtures: AvgPool2d matches PyTorch with and without count_include_pad", "[fixtures][conv]") {
  for (const Fixture& fx : fixtures_of("AvgPool2d")) {
    DYNAMIC_SECTION(fx.name()) {
      const auto& o = fx.options();
      nn::AvgPool2d pool(nn::AvgPool2dOptions(size2(o.at("kernel_size")))
                             .stride(size2(o.at("stride")))
                             .padding(size2(o.at("padding")))
                             .count_include_pad(o.at("count_include_pad")));
      check_call(fx, "", [&](const Tensor& x) { return pool(x); });
    }
  }
}

TEST_CASE("fixtures: AdaptiveAvgPool2d and Flatten match PyTorch", "[fixtures][conv]") {
  for (const Fixture& fx : fixtures_of("AdaptiveAvgPool2d")) {
    DYNAMIC_SECTION(fx.name()) {
      nn::AdaptiveAvgPool2d pool(size2(fx.options().at("output_size")));
      check_call(fx, "", [&](const Tensor& x) { return pool(x); });
    }
  }
  for (const Fixture& fx : fixtures_of("Flatten")) {
    DYNAMIC_SECTION(fx.name()) {
      nn::Flatten flat(fx.options().at("start_dim"), fx.options().at("end_dim"));
      check_call(fx, "", [&](const Tensor& x) { return flat(x); });
    }
  }
}

TEST_CASE("conv2d's gradients match finite differences in input, weight and bias", "[conv][gradcheck]") {
  Generator gen(17);
  struct Case {
    Shape x, w;
    Size2 stride, padding, dilation;
    int64_t groups;
  };
  const std::vector<Case> cases{{{2, 3, 5, 6}, {4, 3, 3, 3}, 1, 1, 1, 1},
                                {{2, 4, 7, 6}, {6, 2, 2, 3}, {2, 1}, {1, 0}, {1, 2}, 2},
                                {{1, 3, 6, 5}, {3, 1, 3, 3}, 3, 1, 1, 3},
                                {{3, 5, 4}, {2, 3, 3, 2}, 1, {0, 1}, 1, 1}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    DYNAMIC_SECTION("case " << i) {
      const Tensor x = Tensor::randn(c.x, gen), w = Tensor::randn(c.w, gen), b = Tensor::randn({c.w[0]}, gen);
      check_gradients(
          [&](const std::vector<Tensor>& in) {
            return conv2d(in[0], in[1], in[2], c.stride, c.padding, c.dilation, c.groups);
          },
          {x, w, b});
    }
  }
}

TEST_CASE("pooling's gradients match finite differences", "[conv][gradcheck]") {
  const Tensor x = spread_values({2, 2, 7, 6}, 5);  // a fresh copy for each check: gradients accumulate
  check_gradients([](const std::vector<Tensor>& in) { return max_pool2d(in[0], 3, 2, 1); }, {x.clone()});
  check_gradients(
      [](const std::vector<Tensor>& in) {
        return max_pool2d(in[0], {2, 3}, {3, 1}, 0, {2, 1});
      },
      {x.clone()});
  check_gradients([](const std::vector<Tensor>& in) { return avg_pool2d(in[0], 3, 2, 1); }, {x.clone()});
  check_gradients([](const std::vector<Tensor>& in) { return avg_pool2d(in[0], 3, 2, 1, false); }, {x.clone()});
  check_gradients([](const std::vector<Tensor>& in) { return adaptive_avg_pool2d(in[0], {3, 4}); }, {x.clone()});
  check_gradients([](const std::vector<Tensor>& in) { return flatten(in[0], 1); }, {x.clone()});
}

// Global average pooling (output 1 x 1) sums eight planes side by side: each plane's sum must
// still be the plain one, value after value in float, and its gradient the plain share.
TEST_CASE("global average pooling sums each plane in order, for any number of planes", "[conv]") {
  for (const Shape& shape : {Shape{1, 1, 3, 3}, Shape{3, 5, 4, 3}, Shape{2, 8, 1, 1}, Shape{1, 17, 2, 5}}) {
    const Tensor x = spread_values(shape, 9);
    const int64_t planes = shape[0] * shape[1], size = shape[2] * shape[3];
    Tensor expected = Tensor::empty({shape[0], shape[1], 1, 1});
    for (int64_t p = 0; p < planes; ++p) {
      float sum = 0.0f;
      for (int64_t i = 0; i < size; ++i) sum += x.data()[p * size + i];
      expected.data()[p] = sum / float(size);
    }
    check_close(adaptive_avg_pool2d(x, 1), expected, 0.0, 0.0);
    const Tensor leaf = x.clone().requires_grad_();
    const Tensor out = adaptive_avg_pool2d(leaf, 1);
    const Tensor g = spread_values(out.shape(), 4);
    (out * g).sum().backward();
    for (int64_t i = 0; i < x.numel(); ++i) REQUIRE(leaf.grad().data()[i] == g.data()[i / size] / float(size));
  }
  check_gradients([](const std::vector<Tensor>& in) { return adaptive_avg_pool2d(in[0], 1); },
                  {spread_values({2, 3, 3, 2}, 5)});
}

TEST_CASE("conv2d's im2col path equals the direct loop when the batch spans several chunks", "[conv]") {
  // 8 x 9 x 64 x 64 columns an image: the 4 MB chunk holds 3 of the 7 images (3, 3, 1),
  // and the last chunk of one image takes the path that writes the output directly.
  const kernels::Conv2dGeometry g{.batch = 7,
                                  .in_channels = 8,
                                  .in_h = 64,
                                  .in_w = 64,
                                  .out_channels = 4,
                                  .kernel_h = 3,
                                  .kernel_w = 3,
                                  .pad_h = 1,
                                  .pad_w = 1,
                                  .groups = 2};
  REQUIRE(g.chunk() == 3);
  Generator gen(9);
  const Tensor x = Tensor::randn({7, 8, 64, 64}, gen), w = Tensor::randn({4, 4, 3, 3}, gen);
  const Tensor b = Tensor::randn({4}, gen), dout = Tensor::randn({7, 4, 64, 64}, gen);
  Tensor fast = Tensor::empty(dout.shape()), direct = Tensor::empty(dout.shape());
  kernels::conv2d_forward(g, x.data(), w.data(), b.data(), fast.data());
  kernels::conv2d_forward_direct(g, x.data(), w.data(), b.data(), direct.data());
  check_close(fast, direct, 1e-4, 1e-4);
  Tensor dx = Tensor::empty(x.shape()), dw = Tensor::empty(w.shape()), db = Tensor::empty({4});
  Tensor dx_ref = Tensor::empty(x.shape()), dw_ref = Tensor::empty(w.shape()), db_ref = Tensor::empty({4});
  kernels::conv2d_backward(g, x.data(), w.data(), dout.data(), dx.data(), dw.data(), db.data());
  kernels::conv2d_backward_direct(g, x.data(), w.data(), dout.data(), dx_ref.data(), dw_ref.data(), db_ref.data());
  check_close(dx, dx_ref, 1e-4, 1e-4);
  // dW sums 7 x 4096 products a weight: float32's error grows with that count.
  check_close(dw, dw_ref, 2e-3, 1e-4);
  check_close(db, db_ref, 1e-3, 1e-5);
}

TEST_CASE("im2col's and col2im's gather path equals the rows path", "[conv]") {
  // Strides past the kernel, dilation, padding wider than the kernel's reach, 1x1 and
  // rectangular kernels, odd sizes: every case where a tap reads padding differently; and
  // each run the gather copies whole (output width 4 or 8 at stride 1 or 2).
  struct Case {
    int64_t h, w, kh, kw, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  };
  const std::vector<Case> cases{{8, 8, 3, 3, 1, 1, 1, 1, 1, 1},   {8, 8, 3, 3, 2, 2, 1, 1, 1, 1},
                                {4, 4, 3, 3, 1, 1, 1, 1, 1, 1},   {7, 5, 2, 3, 3, 2, 0, 1, 1, 1},
                                {9, 6, 3, 2, 1, 1, 2, 3, 2, 1},   {5, 5, 1, 1, 4, 1, 0, 0, 1, 1},
                                {6, 11, 3, 3, 2, 3, 2, 0, 1, 3},  {3, 3, 3, 3, 1, 1, 0, 0, 1, 1},
                                {16, 15, 3, 3, 2, 2, 1, 1, 1, 1}, {6, 6, 3, 3, 1, 1, 1, 1, 2, 2}};
  for (const Case& c : cases) {
    const kernels::Conv2dGeometry g{.batch = 3,
                                    .in_channels = 2,
                                    .in_h = c.h,
                                    .in_w = c.w,
                                    .out_channels = 1,
                                    .kernel_h = c.kh,
                                    .kernel_w = c.kw,
                                    .stride_h = c.stride_h,
                                    .stride_w = c.stride_w,
                                    .pad_h = c.pad_h,
                                    .pad_w = c.pad_w,
                                    .dilation_h = c.dilation_h,
                                    .dilation_w = c.dilation_w};
    INFO("input " << c.h << "x" << c.w << " kernel " << c.kh << "x" << c.kw << " stride " << c.stride_h << ","
                  << c.stride_w << " padding " << c.pad_h << "," << c.pad_w << " dilation " << c.dilation_h << ","
                  << c.dilation_w);
    REQUIRE(kernels::im2col_gathers(g));
    Generator gen(uint64_t(c.h * 100 + c.w));
    const Tensor x = Tensor::randn({3, 2, c.h, c.w}, gen);
    // Images 1 and 2 of the 3: the offset of `first` is part of what is compared.
    const Shape cols_shape{2 * c.kh * c.kw, 2 * g.positions()};
    Tensor by_rows = Tensor::full(cols_shape, 7.0f), by_gather = Tensor::full(cols_shape, -7.0f);
    kernels::im2col_rows(g, x.data(), 1, 2, by_rows.data());
    kernels::im2col_gather(g, x.data(), 1, 2, by_gather.data());
    check_close(by_gather, by_rows, 0.0, 0.0);  // the same values copied: equal bits
    const Tensor cols = Tensor::randn(cols_shape, gen);
    Tensor dx_rows = Tensor::randn(x.shape(), gen);  // col2im adds into what is there
    Tensor dx_gather = dx_rows.clone();
    kernels::col2im_rows(g, cols.data(), 1, 2, dx_rows.data());
    kernels::col2im_gather(g, cols.data(), 1, 2, dx_gather.data());
    check_close(dx_gather, dx_rows, 1e-6, 1e-6);  // at most KH * KW terms an input, summed in another order
  }
}

TEST_CASE("im2col gathers on narrow images whose padded plane fits its stack buffer", "[conv]") {
  kernels::Conv2dGeometry g{
      .batch = 1, .in_channels = 1, .in_h = 8, .in_w = 8, .out_channels = 1, .kernel_h = 3, .kernel_w = 3};
  CHECK(kernels::im2col_gathers(g));
  g.in_h = g.in_w = 32;  // output width 30: the rows path
  CHECK_FALSE(kernels::im2col_gathers(g));
  g.in_h = 1000, g.in_w = 10;  // narrow, but a 10000-float plane
  CHECK_FALSE(kernels::im2col_gathers(g));
}

TEST_CASE("Conv2d draws PyTorch's init bound and prints PyTorch's repr", "[conv]") {
  Generator gen(1);
  nn::Conv2d conv(nn::Conv2dOptions(4, 6, {3, 5}).groups(2), gen);
  CHECK(conv.weight.shape() == Shape{6, 2, 3, 5});
  const float bound = 1.0f / std::sqrt(30.0f);  // fan_in = 4 / 2 * 3 * 5
  for (const Tensor& t : {conv.weight, conv.bias})
    for (float v : t.to_vector()) CHECK(std::abs(v) <= bound);
  CHECK(*std::max_element(conv.weight.data(), conv.weight.data() + conv.weight.numel()) > 0.9f * bound);
  CHECK(conv.repr() == "Conv2d(4, 6, kernel_size=(3, 5), stride=(1, 1), groups=2)");
  CHECK(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).stride(2).padding({1, 2}).dilation(2).bias(false)).repr() ==
        "Conv2d(3, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 2), dilation=(2, 2), bias=False)");
  CHECK(nn::MaxPool2d(2).repr() == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  CHECK(nn::AvgPool2d(nn::AvgPool2dOptions(3).stride(2).padding(1)).repr() ==
        "AvgPool2d(kernel_size=3, stride=2, padding=1)");
  CHECK(nn::AdaptiveAvgPool2d(1).repr() == "AdaptiveAvgPool2d(output_size=1)");
  CHECK(nn::AdaptiveAvgPool2d({2, 3}).repr() == "AdaptiveAvgPool2d(output_size=(2, 3))");
  CHECK(nn::Flatten().repr() == "Flatten(start_dim=1, end_dim=-1)");
}

TEST_CASE("conv2d's errors name the shapes as PyTorch words them", "[conv][errors]") {
  const Tensor w = Tensor::zeros({4, 3, 3, 3});
  using Catch::Contains;
  REQUIRE_THROWS_WITH(conv2d(Tensor::zeros({1, 3, 2, 2}), w),
                      Contains("Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel "
                               "size can't be greater than actual input size") &&
                          Contains("[1, 3, 2, 2]") && Contains("[4, 3, 3, 3]"));
  REQUIRE_THROWS_WITH(conv2d(Tensor::zeros({1, 3, 2, 2}), w, {}, 1, 0, 2), Contains("Kernel size: (5 x 5)"));
  REQUIRE_THROWS_WITH(conv2d(Tensor::zeros({1, 3, 8, 8}), Tensor::zeros({4, 2, 3, 3})),
                      Contains("Given groups=1, weight of size [4, 2, 3, 3], expected input[1, 3, 8, 8] to have 2 "
                               "channels, but got 3 channels instead"));
  REQUIRE_THROWS_WITH(conv2d(Tensor::zeros({1, 4, 8, 8}), Tensor::zeros({4, 2, 3, 3}), {}, 1, 0, 1, 3),
                      Contains("Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight "
                               "of size [4, 2, 3, 3] instead"));
  REQUIRE_THROWS_WITH(conv2d(Tensor::zeros({3, 8}), w),
                      Contains("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [3, "
                               "8]") &&
                          Contains("[4, 3, 3, 3]"));
  REQUIRE_THROWS_WITH(conv2d(Tensor::zeros({1, 3, 8, 8}), Tensor::zeros({4, 3, 3})),
                      Contains("Expected 4-dimensional weight for 4-dimensional input [1, 3, 8, 8], but got "
                               "3-dimensional weight of size [4, 3, 3] instead"));
  REQUIRE_THROWS_WITH(conv2d(Tensor::zeros({1, 3, 8, 8}), w, Tensor::zeros({3})),
                      Contains("Given weight of size [4, 3, 3, 3], expected bias to be 1-dimensional with 4 "
                               "elements, but got bias of size [3] instead"));
  REQUIRE_THROWS_WITH(conv2d(Tensor::zeros({1, 3, 8, 8}), w, {}, 0), Contains("non-positive stride"));
  REQUIRE_THROWS_WITH(conv2d(Tensor::zeros({1, 3, 8, 8}), w, {}, 1, -1), Contains("negative padding"));
  REQUIRE_THROWS_WITH(conv2d(Tensor::zeros({1, 3, 8, 8}), w, {}, 1, 0, 0), Contains("dilation should be greater"));
  REQUIRE_THROWS_WITH(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)),
                      Contains("in_channels must be divisible by groups, got in_channels=3 and groups=2"));
  REQUIRE_THROWS_WITH(nn::Conv2d(nn::Conv2dOptions(4, 3, 3).groups(2)),
                      Contains("out_channels must be divisible by groups, got out_channels=3 and groups=2"));
  REQUIRE_THROWS_WITH(nn::Conv2d(0, 3, 3), Contains("in_channels=0"));
}

TEST_CASE("pooling's and flatten's errors name the shapes as PyTorch words them", "[conv][errors]") {
  using Catch::Contains;
  REQUIRE_THROWS_WITH(max_pool2d(Tensor::zeros({1, 1, 2, 2}), 3),
                      Contains("Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small"));
  REQUIRE_THROWS_WITH(avg_pool2d(Tensor::zeros({2, 3, 2, 5}), 3),
                      Contains("Given input size: (3x2x5). Calculated output size: (3x0x1). Output size is too small"));
  REQUIRE_THROWS_WITH(max_pool2d(Tensor::zeros({2, 2}), 3),
                      Contains("non-empty 3D or 4D (batch mode) tensor expected for input, but got input of size: "
                               "[2, 2]"));
  REQUIRE_THROWS_WITH(avg_pool2d(Tensor::zeros({0, 1, 4, 4}), 2), Contains("non-empty 3D or 4D"));
  REQUIRE_THROWS_WITH(max_pool2d(Tensor::zeros({1, 1, 8, 8}), 2, 2, 2),
                      Contains("pad should be at most half of kernel size, but got pad=(2, 2) and kernel_size=(2, 2)"));
  REQUIRE_THROWS_WITH(avg_pool2d(Tensor::zeros({1, 1, 8, 8}), {3, 2}, 1, {1, 2}),
                      Contains("pad should be at most half of kernel size, but got pad=(1, 2) and kernel_size=(3, 2)"));
  REQUIRE_THROWS_WITH(max_pool2d(Tensor::zeros({1, 1, 8, 8}), 0), Contains("kernel_size must be greater than zero"));
  REQUIRE_THROWS_WITH(adaptive_avg_pool2d(Tensor::zeros({2, 2}), 1),
                      Contains("adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [2, 2]"));
  REQUIRE_THROWS_WITH(adaptive_avg_pool2d(Tensor::zeros({1, 1, 0, 2}), 1),
                      Contains("non-zero size for non-batch dimensions, but input has sizes [1, 1, 0, 2]"));
  REQUIRE_THROWS_WITH(flatten(Tensor::zeros({2, 3}), 3),
                      Contains("Dimension out of range (expected to be in range of [-2, 1], but got 3)"));
  REQUIRE_THROWS_WITH(flatten(Tensor::zeros({2, 3, 4}), 2, 1),
                      Contains("flatten() has invalid args: start_dim cannot come after end_dim"));
}

TEST_CASE("max_pool2d sends the gradient to the first maximum of a tie and lets NaN win", "[conv]") {
  Tensor x = Tensor::from_vector({1, 1, 1, 1}, {1, 1, 2, 2}).requires_grad_();
  max_pool2d(x, 2).sum().backward();
  check_close(x.grad(), {1, 0, 0, 0});
  const Tensor with_nan = Tensor::from_vector({1, NAN, 5, 2}, {1, 2, 2});
  CHECK(std::isnan(max_pool2d(with_nan, 2).item()));
}

}  // namespace test_conv
