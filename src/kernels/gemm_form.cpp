#include "kernels/gemm_form.hpp"

#include <cblas.h>

#include <algorithm>
#include <string_view>

namespace minidl::kernels {
namespace {

// One row times a matrix. Packing costs more than the row's products: under Haswell's
// kernels the batch-1 Linear forward (1, 64) x (64, 64)^T takes 2.1 us as sgemm against 0.38
// us as sgemv, its input gradient 0.88 against 0.29 (bench/bench_gemm_forms). Within their
// window of 10^6 multiply-adds the small-matrix kernels beat sgemv (0.16 and 0.09 us), so
// those cores keep sgemm there; past it they pack too (1024 x 1024: sgemv 4x faster).
bool row_as_gemv(bool transpose_a, int64_t m, int64_t n, int64_t k) {
  if (m != 1 || transpose_a) return false;
  return !blas_has_small_matrix_kernels() || n * k > 1000000;
}

}  // namespace

bool blas_has_small_matrix_kernels() {
  static const bool yes = [] {
    const std::string_view core = openblas_get_corename();
    return core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids";
  }();
  return yes;
}

GemmForm choose_gemm_form(bool transpose_a, int64_t m, int64_t n, int64_t k) {
  return row_as_gemv(transpose_a, m, n, k) ? GemmForm::RowTimesB : GemmForm::Gemm;
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
