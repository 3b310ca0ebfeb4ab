// kernels::gemm's forms (src/kernels/gemm_form.cpp): every product the same within float32's
// bound through gemm() and through the sgemv form called directly, and the rule's choice for
// this core. Tagged [gemm]: scripts/test.sh runs them again under each OpenBLAS core type, so
// each rule's branch runs somewhere.
#include <cmath>
#include <cstring>
#include <limits>

#include "gemm_recorder.hpp"
#include "kernels/gemm.hpp"
#include "kernels/gemm_form.hpp"
#include "support/check.hpp"

namespace test_gemm_form {

using namespace minidl;
using kernels::GemmForm;

namespace {

// C = alpha op(A) op(B) + beta C0 through gemm(), or for one row (m == 1, A not transposed)
// with `as_gemv` through the sgemv form directly, against the double reference within
// float32's bound for a k-term sum: |error| <= (k + 2) u (|alpha| |A| |B| + |beta C0|)
// elementwise, u = 2^-24 (each product and addition rounds once, the scaling twice).
void check_against_reference(bool as_gemv, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float beta,
                             Generator& gen) {
  INFO("sgemv form " << as_gemv << " ta " << ta << " tb " << tb << " m " << m << " n " << n << " k " << k << " beta "
                     << beta);
  const float alpha = 1.5f;
  const Tensor a = Tensor::randn(ta ? Shape{k, m} : Shape{m, k}, gen);
  const Tensor b = Tensor::randn(tb ? Shape{n, k} : Shape{k, n}, gen);
  // With beta 0, C's old values must not matter: NaN there would show through.
  const Tensor c0 =
      beta == 0.0f ? Tensor::full({m, n}, std::numeric_limits<float>::quiet_NaN()) : Tensor::randn({m, n}, gen);
  Tensor fast = c0.clone(), exact = c0.clone(), bound = Tensor::zeros({m, n});
  if (as_gemv) kernels::gemm_row_as_gemv(tb, n, k, alpha, a.data(), b.data(), beta, fast.data());
  else kernels::gemm(ta, tb, m, n, k, alpha, a.data(), b.data(), beta, fast.data());
  kernels::gemm_reference(ta, tb, m, n, k, alpha, a.data(), b.data(), beta, exact.data());
  Tensor abs_a = a.clone(), abs_b = b.clone();
  for (Tensor* t : {&abs_a, &abs_b})
    for (int64_t i = 0; i < t->numel(); ++i) t->data()[i] = std::abs(t->data()[i]);
  kernels::gemm_reference(ta, tb, m, n, k, std::abs(alpha), abs_a.data(), abs_b.data(), 0.0f, bound.data());
  const float u = std::ldexp(1.0f, -24);
  for (int64_t i = 0; i < m * n; ++i) {
    const float prior = beta == 0.0f ? 0.0f : std::abs(beta * c0.data()[i]);
    const float allowed = float(k + 2) * u * (bound.data()[i] + prior) + std::numeric_limits<float>::min();
    INFO("element " << i << ": " << fast.data()[i] << " against " << exact.data()[i]);
    REQUIRE(std::abs(fast.data()[i] - exact.data()[i]) <= allowed);
  }
}

}  // namespace

TEST_CASE("gemm gives the reference's product in every form it can hand BLAS", "[ops][gemm]") {
  Generator gen(11);
  // One row (sgemv on cores without small-matrix kernels), odd sizes, a one-term sum, the
  // lesson's (64, 64) products, and a product past the small-matrix kernels' window.
  const int64_t shapes[][3] = {{1, 64, 64}, {1, 7, 9}, {1, 10, 1}, {64, 64, 64}, {6, 13, 5}, {3, 2, 1}, {200, 90, 70}};
  for (const auto& s : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (float beta : {0.0f, 0.5f}) {
          check_against_reference(false, ta, tb, s[0], s[1], s[2], beta, gen);
          if (s[0] == 1 && !ta) check_against_reference(true, ta, tb, s[0], s[1], s[2], beta, gen);
        }
}

TEST_CASE("gemm's rule picks the form OpenBLAS runs fastest on this core", "[ops][gemm]") {
  // Measured by bench/bench_gemm_forms: the small-matrix kernels beat sgemv on one row;
  // the other cores pack both operands for every sgemm, which one row cannot repay.
  const GemmForm lesson_row = kernels::choose_gemm_form(false, 1, 64, 64);
  CHECK(kernels::choose_gemm_form(false, 64, 64, 64) == GemmForm::Gemm);
  CHECK(kernels::choose_gemm_form(true, 1, 64, 64) == GemmForm::Gemm);  // A^T: its one row is a column
  CHECK(lesson_row == (kernels::blas_has_small_matrix_kernels() ? GemmForm::Gemm : GemmForm::RowTimesB));
  // Past the small-matrix kernels' 10^6 multiply-adds every core packs: sgemv.
  CHECK(kernels::choose_gemm_form(false, 1, 1024, 1024) == GemmForm::RowTimesB);
}

TEST_CASE("the GEMM recorder logs the sgemv form as the one-row product, and replays it as sgemv", "[ops][gemm]") {
  Generator gen(12);
  for (bool tb : {true, false}) {
    const Tensor a = Tensor::randn({1, 64}, gen), b = Tensor::randn(tb ? Shape{10, 64} : Shape{64, 10}, gen);
    Tensor c = Tensor::empty({1, 10}), again = Tensor::empty({1, 10});
    std::vector<bench::GemmCall> calls;
    {
      bench::GemmRecorder log;
      kernels::gemm_row_as_gemv(tb, 10, 64, 1.0f, a.data(), b.data(), 0.0f, c.data());
      calls = log.calls();
    }
    REQUIRE(calls.size() == 1);
    const bench::GemmCall& call = calls[0];
    CHECK((call.gemv && call.m == 1 && call.n == 10 && call.k == 64 && call.transpose_b == tb && !call.transpose_a));
    CHECK((call.a == a.data() && call.b == b.data() && call.c == c.data()));
    bench::replay_gemm(call, a.data(), b.data(), again.data());
    CHECK(std::memcmp(again.data(), c.data(), 10 * sizeof(float)) == 0);  // the same call: the same bits
  }
}

}  // namespace test_gemm_form
