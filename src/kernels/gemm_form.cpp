#include "kernels/gemm_form.hpp"

#include <cblas.h>

#include <algorithm>
#include <string_view>

namespace minidl::kernels {

bool blas_has_small_matrix_kernels() {
  static const bool yes = [] {
    const std::string_view core = openblas_get_corename();
    return core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids";
  }();
  return yes;
}

// One row times a matrix: packing costs more than the row's products, except within the
// small-matrix kernels' window of 10^6 multiply-adds (docs/benchmarks.md, "One row times a matrix").
GemmForm choose_gemm_form(bool transpose_a, int64_t m, int64_t n, int64_t k) {
  const bool row = m == 1 && !transpose_a;
  return row && (!blas_has_small_matrix_kernels() || n * k > 1000000) ? GemmForm::RowTimesB : GemmForm::Gemm;
}

void gemm_row_as_gemv(bool transpose_b, int64_t n, int64_t k, float alpha, const float* a, const float* b, float beta,
                      float* c) {
  if (beta == 0.0f) std::fill_n(c, n, 0.0f);  // C's old values may be anything, NaN too
  if (transpose_b)                            // B (n, k): c = B a
    cblas_sgemv(CblasRowMajor, CblasNoTrans, int(n), int(k), alpha, b, int(k), a, 1, beta, c, 1);
  else  // B (k, n): c = B^T a
    cblas_sgemv(CblasRowMajor, CblasTrans, int(k), int(n), alpha, b, int(n), a, 1, beta, c, 1);
}

}  // namespace minidl::kernels
