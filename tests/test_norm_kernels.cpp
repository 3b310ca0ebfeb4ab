// The norm kernels' long paths: rows past one flush of the float lanes (1024 values), and
// BatchNorm batches of several chunks merged, with a mean of 1e4 against a spread of 1e-1,
// against the double references.
#include "support/check.hpp"
#include "support/norm_reference.hpp"

namespace test_norm_kernels {

using namespace minidl;
using minidl::testing::check_close;

TEST_CASE("LayerNorm over 3000 values a row, mean 1e4 and std 1e-1, matches double", "[norm][kernels]") {
  Tensor x = minidl::testing::random_normal({3, 3000}, 11, 1e4f, 0.1f);
  Tensor weight = minidl::testing::random_normal({3000}, 12), bias = minidl::testing::random_normal({3000}, 13);
  check_close(layer_norm(x, {3000}, weight, bias),
              minidl::testing::row_normalize_reference(x, 3000, true, 1e-5, weight, bias), 2e-5, 1e-5);
  Tensor x_grad = x.clone().requires_grad_(), dy = minidl::testing::random_normal({3, 3000}, 14);
  sum(layer_norm(x_grad, {3000}, Tensor(), Tensor()) * dy).backward();
  check_close(x_grad.grad(),
              minidl::testing::normalize_input_grad_reference(x, dy, 3, 3000, 1e-5,
                                                              [](int64_t r, int64_t j) { return r * 3000 + j; }),
              1e-4, 1e-5);
}

TEST_CASE("BatchNorm over several chunks of the batch, mean 1e4 and std 1e-1, matches double", "[norm][kernels]") {
  // (N, C): 64 items a chunk, so 300 items are 5 chunks; (N, C, L): 32768 / (C * L) items a chunk
  for (Shape shape : {Shape{300, 5}, Shape{90, 3, 500}}) {
    INFO("shape " << to_string(shape));
    const int64_t n = shape[0], c = shape[1], inner = shape.size() > 2 ? shape[2] : 1;
    Tensor x = minidl::testing::random_normal(shape, 21, 1e4f, 0.1f);
    const auto m = minidl::testing::channel_moments_reference(x);
    check_close(batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5),
                minidl::testing::channel_normalize_reference(x, m.mean, m.biased_var, 1e-5, Tensor(), Tensor()), 2e-5,
                1e-5);
    Tensor x_grad = x.clone().requires_grad_(), dy = minidl::testing::random_normal(shape, 22);
    sum(batch_norm(x_grad, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5) * dy).backward();
    check_close(x_grad.grad(),
                minidl::testing::normalize_input_grad_reference(
                    x, dy, c, n * inner, 1e-5,
                    [&](int64_t ch, int64_t j) { return ((j / inner) * c + ch) * inner + j % inner; }),
                1e-4, 1e-5);
  }
}

}  // namespace test_norm_kernels
