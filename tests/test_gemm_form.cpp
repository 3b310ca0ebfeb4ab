// kernels::gemm's forms (src/kernels/gemm_form.cpp): every product the same within float32's
// bound however it is handed to BLAS, and the rule's choice for this core. Tagged [gemm]: scripts/test.sh runs them
// again under each OpenBLAS core type, so each rule's branch runs somewhere.
#include <cmath>
#include <limits>

#include "gemm_recorder.hpp"
#include "kernels/gemm.hpp"
#include "kernels/gemm_form.hpp"
#include "support/check.hpp"
#include "support/gemm_rewrite.hpp"

using namespace minidl;
using kernels::GemmForm;
using kernels::GemmRewrite;
using minidl::testing::ForcedGemmRewrite;

namespace {

// C = alpha op(A) op(B) + beta C0 through gemm() in `mode`, against the double reference
// within float32's bound for a k-term sum: |error| <= (k + 2) u (|alpha| |A| |B| + |beta C0|)
// elementwise, u = 2^-24 (each product and addition rounds once, the scaling twice).
void check_against_reference(GemmRewrite mode, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float beta,
                             Generator& gen) {
  INFO("mode " << int(mode) << " ta " << ta << " tb " << tb << " m " << m << " n " << n << " k " << k << " beta "
               << beta);
  const float alpha = 1.5f;
  const Tensor a = Tensor::randn(ta ? Shape{k, m} : Shape{m, k}, gen);
  const Tensor b = Tensor::randn(tb ? Shape{n, k} : Shape{k, n}, gen);
  // With beta 0, C's old values must not matter: NaN there would show through.
  const Tensor c0 =
      beta == 0.0f ? Tensor::full({m, n}, std::numeric_limits<float>::quiet_NaN()) : Tensor::randn({m, n}, gen);
  Tensor fast = c0.clone(), exact = c0.clone(), bound = Tensor::zeros({m, n});
  {
    ForcedGemmRewrite forced(mode);
    kernels::gemm(ta, tb, m, n, k, alpha, a.data(), b.data(), beta, fast.data());
  }
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
  for (GemmRewrite mode : {GemmRewrite::Never, GemmRewrite::Always, GemmRewrite::Rule})
    for (const auto& s : shapes)
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (float beta : {0.0f, 0.5f}) check_against_reference(mode, ta, tb, s[0], s[1], s[2], beta, gen);
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

TEST_CASE("a gemm log records one row's product as called, so a replay makes the same choice", "[ops][gemm]") {
  Generator gen(12);
  const Tensor a = Tensor::randn({1, 64}, gen), b = Tensor::randn({10, 64}, gen);
  Tensor c = Tensor::empty({1, 10});
  ForcedGemmRewrite forced(GemmRewrite::Always);
  bench::GemmRecorder log;
  kernels::gemm(false, true, 1, 10, 64, 1.0f, a.data(), b.data(), 0.0f, c.data());
  REQUIRE(log.calls().size() == 1);
  const kernels::GemmCall& call = log.calls()[0];
  CHECK((call.m == 1 && call.n == 10 && call.k == 64 && call.transpose_b && !call.transpose_a));
  CHECK((call.a == a.data() && call.b == b.data() && call.c == c.data()));
}
