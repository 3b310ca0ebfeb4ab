// matmul, matmul_t (the four transpose combinations), linear, and the gemm kernel.
#include <cmath>

#include "kernels/gemm.hpp"
#include "support/check.hpp"
#include "support/fixture.hpp"

namespace test_ops_matmul {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

TEST_CASE("matmul of hand-worked matrices", "[ops]") {
  Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector({7, 8, 9, 10, 11, 12}, {3, 2});
  Tensor c = matmul(a, b);
  CHECK(c.shape() == Shape{2, 2});
  check_close(c, {58, 64, 139, 154}, 0, 0);
  check_close(matmul(b, a), {39, 54, 69, 49, 68, 87, 59, 82, 105}, 0, 0);
  check_close(matmul(Tensor::zeros({2, 0}), Tensor::zeros({0, 3})), std::vector<float>(6, 0.0f), 0, 0);
  CHECK(matmul(Tensor::zeros({0, 3}), Tensor::zeros({3, 2})).shape() == Shape{0, 2});
}

TEST_CASE("gemm agrees with its plain-loop reference", "[ops]") {
  Generator gen(3);
  const int64_t m = 5, n = 7, k = 9;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (float beta : {0.0f, 0.5f}) {
        INFO("ta " << ta << " tb " << tb << " beta " << beta);
        Tensor a = Tensor::randn(ta ? Shape{k, m} : Shape{m, k}, gen);
        Tensor b = Tensor::randn(tb ? Shape{n, k} : Shape{k, n}, gen);
        Tensor c0 = Tensor::randn({m, n}, gen);
        Tensor fast = c0.clone(), slow = c0.clone();
        kernels::gemm(ta, tb, m, n, k, 1.5f, a.data(), b.data(), beta, fast.data());
        kernels::gemm_reference(ta, tb, m, n, k, 1.5f, a.data(), b.data(), beta, slow.data());
        check_close(fast, slow, 1e-5, 1e-5);
      }
}

// Products past 2^21 multiply-adds are split over threads by rows of C (or by columns when
// C has few rows), each share a single-threaded sgemm on sliced operands. Every element is
// compared with the float64 reference within what a float32 sum of k products can drift in
// any order: (k + 2) 2^-24 of the sum of the products' magnitudes, the result's and beta C's.
TEST_CASE("gemm split over threads by rows or columns agrees with its reference", "[ops]") {
  const int saved_threads = get_num_threads();
  const auto magnitude = [](const Tensor& x) {
    Tensor y = x.clone();
    for (int64_t i = 0; i < y.numel(); ++i) y.data()[i] = std::abs(y.data()[i]);
    return y;
  };
  Generator gen(5);
  struct Case {
    int64_t m, n, k;
  };
  // rows: 129 leaves a last share that is not a multiple of 16; columns: 70 rows are too few
  // to split; 100 x 100: too few of either, OpenBLAS decides.
  for (const Case& size : {Case{129, 130, 131}, Case{70, 301, 120}, Case{100, 100, 300}})
    for (int threads : {2, 3})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          const auto [m, n, k] = size;
          INFO("m " << m << " n " << n << " k " << k << " threads " << threads << " ta " << ta << " tb " << tb);
          set_num_threads(threads);
          Tensor a = Tensor::randn(ta ? Shape{k, m} : Shape{m, k}, gen);
          Tensor b = Tensor::randn(tb ? Shape{n, k} : Shape{k, n}, gen);
          const Tensor c0 = Tensor::randn({m, n}, gen);
          Tensor c = c0.clone(), reference = c0.clone();
          kernels::gemm(ta, tb, m, n, k, 1.5f, a.data(), b.data(), 0.5f, c.data());
          kernels::gemm_reference(ta, tb, m, n, k, 1.5f, a.data(), b.data(), 0.5f, reference.data());
          Tensor magnitudes = Tensor::zeros({m, n});  // 1.5 sum_p |a_ip b_pj|
          kernels::gemm_reference(ta, tb, m, n, k, 1.5f, magnitude(a).data(), magnitude(b).data(), 0.0f,
                                  magnitudes.data());
          const double u = std::ldexp(1.0, -24);
          int64_t outside = 0;
          for (int64_t i = 0; i < m * n; ++i) {
            const double prior = 0.5 * std::abs(double(c0.data()[i]));  // |beta C|
            const double bound = double(k + 2) * u * (magnitudes.data()[i] + std::abs(reference.data()[i]) + prior);
            outside += std::abs(double(c.data()[i]) - double(reference.data()[i])) > bound;
          }
          CHECK(outside == 0);
        }
  set_num_threads(saved_threads);
}

TEST_CASE("matmul_t takes transposes as flags for all four combinations", "[ops]") {
  Generator gen(4);
  const int64_t m = 4, n = 6, k = 5;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      INFO("ta " << ta << " tb " << tb);
      Tensor a = Tensor::randn(ta ? Shape{k, m} : Shape{m, k}, gen);
      Tensor b = Tensor::randn(tb ? Shape{n, k} : Shape{k, n}, gen);
      Tensor expected = Tensor::empty({m, n});
      kernels::gemm_reference(ta, tb, m, n, k, 1.0f, a.data(), b.data(), 0.0f, expected.data());
      Tensor c = matmul_t(a, ta, b, tb);
      CHECK(c.shape() == Shape{m, n});
      check_close(c, expected, 1e-5, 1e-5);
      // Same as materializing the transposes.
      check_close(c, matmul(ta ? transpose(a) : a, tb ? transpose(b) : b), 1e-5, 1e-5);
    }
}

TEST_CASE("linear is x W^T + b with or without a bias", "[ops]") {
  Tensor x = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor w = Tensor::from_vector({1, 0, -1, 2, 1, 0}, {2, 3});  // (out 2, in 3)
  Tensor b = Tensor::from_vector({10, 20});
  check_close(linear(x, w, b), {8, 24, 8, 33}, 0, 0);
  check_close(linear(x, w, Tensor()), {-2, 4, -2, 13}, 0, 0);
  Generator gen(8);
  Tensor bx = Tensor::randn({7, 5}, gen), bw = Tensor::randn({3, 5}, gen), bb = Tensor::randn({3}, gen);
  check_close(linear(bx, bw, bb), add(matmul(bx, transpose(bw)), bb), 1e-5, 1e-5);
}

TEST_CASE("matmul and linear shape errors name both shapes", "[ops]") {
  Tensor a = Tensor::zeros({2, 3});
  REQUIRE_THROWS_WITH(matmul(a, Tensor::zeros({4, 5})),
                      Contains("matmul: shapes [2, 3] and [4, 5] cannot be multiplied (2x3 and 4x5)"));
  REQUIRE_THROWS_WITH(matmul_t(a, true, Tensor::zeros({3, 5}), false),
                      Contains("shapes [2, 3]^T and [3, 5] cannot be multiplied (3x2 and 3x5)"));
  REQUIRE_THROWS_WITH(matmul_t(a, false, Tensor::zeros({3}), false),
                      Contains("expected two 2-D tensors, got shapes [2, 3] and [3]"));
  CHECK(matmul(a, Tensor::zeros({3})).shape() == Shape{2});  // torch.matmul's matrix x vector
  REQUIRE_THROWS_WITH(linear(a, Tensor::zeros({4, 2}), Tensor()),
                      Contains("linear: shapes [2, 3] and [4, 2]^T cannot be multiplied (2x3 and 2x4)"));
  REQUIRE_THROWS_WITH(linear(a, Tensor::zeros({4, 3}), Tensor::zeros({3})),
                      Contains("linear: expected a bias of shape [4], got [3]"));
}

TEST_CASE("gradients of matmul, matmul_t and linear by finite differences", "[ops][autograd]") {
  Generator gen(9);
  using Inputs = const std::vector<Tensor>&;
  check_gradients([](Inputs in) { return matmul(in[0], in[1]); },
                  {Tensor::randn({3, 4}, gen), Tensor::randn({4, 5}, gen)});
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      INFO("ta " << ta << " tb " << tb);
      Tensor a = Tensor::randn(ta ? Shape{4, 3} : Shape{3, 4}, gen);
      Tensor b = Tensor::randn(tb ? Shape{5, 4} : Shape{4, 5}, gen);
      check_gradients([ta, tb](Inputs in) { return matmul_t(in[0], ta, in[1], tb); }, {a, b});
    }
  check_gradients([](Inputs in) { return linear(in[0], in[1], in[2]); },
                  {Tensor::randn({6, 4}, gen), Tensor::randn({3, 4}, gen), Tensor::randn({3}, gen)});
  check_gradients([](Inputs in) { return linear(in[0], in[1], Tensor()); },
                  {Tensor::randn({6, 4}, gen), Tensor::randn({3, 4}, gen)});
  // A x A: the same tensor on both sides.
  check_gradients([](Inputs in) { return matmul(in[0], in[0]); }, {Tensor::randn({3, 3}, gen)});
}

TEST_CASE("linear computes only the gradients that are needed", "[ops][autograd]") {
  Generator gen(10);
  Tensor x = Tensor::randn({4, 3}, gen);
  Tensor w = Tensor::randn({2, 3}, gen).requires_grad_();
  Tensor b = Tensor::zeros({2}).requires_grad_();
  sum(linear(x, w, b)).backward();
  CHECK_FALSE(x.grad().defined());
  check_close(b.grad(), {4, 4}, 0, 0);
  check_close(w.grad(), sum(x, {0}, true).reshape({1, 3}) * Tensor::ones({2, 3}), 1e-6, 1e-6);
}

TEST_CASE("matmul matches PyTorch's torch.matmul: 1-D operands, batches, broadcast batch dims", "[ops][fixtures]") {
  // scripts/fixtures/ops.py, matmul_cases: out = torch.matmul(a, b), gradients of sum(out * w).
  const auto fixtures = minidl::testing::fixtures_of("matmul");
  CHECK(fixtures.size() == 8);
  for (const minidl::testing::Fixture& fx : fixtures) {
    INFO(fx.name());
    Tensor a = fx["a"].clone().requires_grad_(), b = fx["b"].clone().requires_grad_();
    Tensor out = matmul(a, b);
    check_close(out, fx["output"], 1e-5, 1e-5);
    out.backward(fx["grad_output"]);
    check_close(a.grad(), fx["a.grad"], 1e-5, 1e-5);
    check_close(b.grad(), fx["b.grad"], 1e-5, 1e-5);
  }
}

TEST_CASE("matmul of 1-D and batched operands: gradients by finite differences, errors", "[ops][autograd]") {
  Generator gen(31);
  using Inputs = const std::vector<Tensor>&;
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{4}, {4, 3}},       {{3, 4}, {4}},          {{5}, {5}},
      {{2, 3, 4}, {4, 2}}, {{2, 3, 4}, {2, 4, 2}}, {{2, 1, 3, 4}, {3, 4, 2}},
      {{4}, {2, 4, 3}},    {{2, 3, 4}, {4}},       {{3, 4}, {2, 4, 2}}};
  for (const auto& [sa, sb] : cases) {
    INFO(to_string(sa) << " x " << to_string(sb));
    check_gradients([](Inputs in) { return matmul(in[0], in[1]); }, {Tensor::randn(sa, gen), Tensor::randn(sb, gen)});
  }
  CHECK(matmul(Tensor::zeros({2, 1, 3, 4}), Tensor::zeros({3, 4, 2})).shape() == Shape{2, 3, 3, 2});
  CHECK(matmul(Tensor::zeros({5}), Tensor::zeros({5})).dim() == 0);
  REQUIRE_THROWS_WITH(matmul(Tensor::zeros({2, 3, 4}), Tensor::zeros({3, 4, 2})),
                      Catch::Contains("shapes [2, 3, 4] and [3, 4, 2] cannot be multiplied"));
  REQUIRE_THROWS_WITH(matmul(Tensor::zeros({4}), Tensor::zeros({3})),
                      Catch::Contains("shapes [4] and [3] cannot be multiplied"));
  REQUIRE_THROWS_WITH(matmul(Tensor::scalar(1), Tensor::zeros({3})), Catch::Contains("at least 1 dimension"));
  REQUIRE_THROWS_WITH(matmul(Tensor::zeros({2, 3, 4}), Tensor::zeros({5, 2})),
                      Catch::Contains("shapes [2, 3, 4] and [5, 2] cannot be multiplied"));
}

TEST_CASE("linear takes inputs of any rank (N, *, in) and a single (in) example", "[ops][autograd]") {
  Generator gen(32);
  using Inputs = const std::vector<Tensor>&;
  for (const Shape& shape : {Shape{5}, Shape{2, 5}, Shape{2, 3, 5}, Shape{2, 1, 3, 5}}) {
    INFO(to_string(shape));
    Tensor x = Tensor::randn(shape, gen), w = Tensor::randn({4, 5}, gen), b = Tensor::randn({4}, gen);
    Shape expected = shape;
    expected.back() = 4;
    CHECK(linear(x, w, b).shape() == expected);
    check_gradients([](Inputs in) { return linear(in[0], in[1], in[2]); }, {x, w, b});
  }
  REQUIRE_THROWS_WITH(linear(Tensor::zeros({2, 3, 4}), Tensor::zeros({4, 5}), Tensor()),
                      Catch::Contains("got [2, 3, 4]"));
}

}  // namespace test_ops_matmul
