// The benchmarks' GEMM recorder (bench/gemm_recorder.hpp): the link seam sees the library's
// sgemm calls, with their shapes and operands, only while a recorder is alive.
#include <catch2/catch.hpp>

#include "gemm_recorder.hpp"
#include "minidl/minidl.hpp"

namespace test_gemm_recorder {

using namespace minidl;
using bench::GemmCall;
using bench::GemmRecorder;

namespace {
bool same_call(const GemmCall& c, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float beta) {
  return c.transpose_a == ta && c.transpose_b == tb && c.m == m && c.n == n && c.k == k && c.beta == beta;
}
}  // namespace

TEST_CASE("GemmRecorder logs each gemm call of a forward and backward, in order", "[gemm][bench]") {
  Generator gen(3);
  Tensor x = Tensor::randn({5, 3}, gen).requires_grad_();
  Tensor w = Tensor::randn({4, 3}, gen).requires_grad_();
  Tensor b = Tensor::randn({4}, gen).requires_grad_();
  GemmRecorder recorder;
  Tensor y = linear(x, w, b);  // (5, 4): x W^T, then the bias added to its rows
  sum(y).backward();
  const std::vector<GemmCall> calls = recorder.calls();
  REQUIRE(calls.size() == 3);
  CHECK(same_call(calls[0], false, true, 5, 4, 3, 0.0f));   // y = x W^T
  CHECK(same_call(calls[1], false, false, 5, 3, 4, 0.0f));  // dx = g W
  CHECK(same_call(calls[2], true, false, 4, 3, 5, 0.0f));   // dW = g^T x
  // The operands' addresses: a replay gives each buffer its own (bench/timing.hpp).
  CHECK(calls[0].a == x.data());
  CHECK(calls[0].b == w.data());
  CHECK(calls[0].c == y.data());
  CHECK(calls[1].b == w.data());
  CHECK(calls[1].c == x.grad().data());
  CHECK(calls[2].b == x.data());
  CHECK(calls[2].c == w.grad().data());
  CHECK(calls[1].a == calls[2].a);  // both read the gradient of y
}

TEST_CASE("GemmRecorder records nothing once destroyed", "[gemm][bench]") {
  Tensor a = Tensor::ones({2, 3});
  Tensor b = Tensor::ones({3, 2});
  std::vector<GemmCall> seen;
  {
    GemmRecorder recorder;
    matmul(a, b);
    seen = recorder.calls();
  }
  REQUIRE(seen.size() == 1);
  CHECK(same_call(seen[0], false, false, 2, 2, 3, 0.0f));
  matmul(b, a);  // no recorder
  GemmRecorder later;
  CHECK(later.calls().empty());
  matmul(b, a);
  REQUIRE(later.calls().size() == 1);
  CHECK(same_call(later.calls()[0], false, false, 3, 3, 2, 0.0f));
}

}  // namespace test_gemm_recorder
