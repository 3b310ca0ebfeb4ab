#include "kernels/gemm.hpp"

#include <cblas.h>

#include "kernels/gemm_form.hpp"

namespace minidl::kernels {

void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          const float* b, float beta, float* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: C = beta C (BLAS rejects a zero leading dimension)
    for (int64_t i = 0; i < m * n; ++i) c[i] = beta == 0.0f ? 0.0f : beta * c[i];
    return;
  }
  if (choose_gemm_form(transpose_a, m, n, k) == GemmForm::RowTimesB) {
    gemm_row_as_gemv(transpose_b, n, k, alpha, a, b, beta, c);
    return;
  }
  const auto lda = int(transpose_a ? m : k);  // row length of A as stored
  const auto ldb = int(transpose_b ? k : n);
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans, int(m),
              int(n), int(k), alpha, a, lda, b, ldb, beta, c, int(n));
}

void gemm_strided(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: C = beta C
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans, int(m),
              int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

void gemm_reference(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    const float* b, float beta, float* c) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        float av = transpose_a ? a[p * m + i] : a[i * k + p];
        float bv = transpose_b ? b[j * k + p] : b[p * n + j];
        s += double(av) * double(bv);
      }
      float prior = beta == 0.0f ? 0.0f : beta * c[i * n + j];
      c[i * n + j] = float(alpha * s) + prior;
    }
}

}  // namespace minidl::kernels
