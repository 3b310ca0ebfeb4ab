#include "kernels/gemm.hpp"

#include <cblas.h>

#include <algorithm>

#include "kernels/gemm_form.hpp"

namespace minidl::kernels {
namespace {
thread_local std::vector<GemmCall>* recorded_calls = nullptr;  // set_gemm_call_log's log
}  // namespace

void set_gemm_call_log(std::vector<GemmCall>* log) { recorded_calls = log; }
bool gemm_calls_logged() { return recorded_calls != nullptr; }

void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          const float* b, float beta, float* c) {
  const GemmForm form = choose_gemm_form(transpose_a, m, n, k);  // a replay through gemm() chooses the same
  if (recorded_calls != nullptr) recorded_calls->push_back({transpose_a, transpose_b, m, n, k, beta, a, b, c});
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: C = beta C (BLAS rejects a zero leading dimension)
    for (int64_t i = 0; i < m * n; ++i) c[i] = beta == 0.0f ? 0.0f : beta * c[i];
    return;
  }
  if (form == GemmForm::RowTimesB) {            // c (n) = alpha op(B)^T a + beta c
    if (beta == 0.0f) std::fill_n(c, n, 0.0f);  // C's old values may be anything, NaN too
    if (transpose_b)                            // B (n, k): c = B a
      cblas_sgemv(CblasRowMajor, CblasNoTrans, int(n), int(k), alpha, b, int(k), a, 1, beta, c, 1);
    else  // B (k, n): c = B^T a
      cblas_sgemv(CblasRowMajor, CblasTrans, int(k), int(n), alpha, b, int(n), a, 1, beta, c, 1);
    return;
  }
  const auto lda = int(transpose_a ? m : k);  // row length of A as stored
  const auto ldb = int(transpose_b ? k : n);
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans, int(m),
              int(n), int(k), alpha, a, lda, b, ldb, beta, c, int(n));
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
