#include "kernels/gemm.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <utility>

#include "kernels/gemm_form.hpp"

namespace minidl::kernels {

namespace {

// Products of at least this many multiply-adds are split over OpenMP's threads here rather
// than by OpenBLAS: its own threading shares packed panels between threads (spin-waits and
// yields at every panel) and zeroes a beta = 0 output by strided loops; each thread calling
// single-threaded sgemm on its own rows of C zeroes them with one memset and never waits
// until the end (docs/benchmarks.md, "Fast paths").
constexpr int64_t kSplitProducts = int64_t(1) << 21;
// The fewest rows (or columns) of C a thread's share may have: the kernels' tiles are 16 wide.
constexpr int64_t kSplitMinimum = 64;

// One thread's share [from, to) of C's rows (or columns) of `extent`: multiples of 16.
std::pair<int64_t, int64_t> share(int64_t extent, int thread, int threads) {
  const int64_t part = ((extent + threads - 1) / threads + 15) / 16 * 16;
  const int64_t from = std::min(extent, thread * part);
  return {from, std::min(extent, from + part)};
}

}  // namespace

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
  const int64_t lda = transpose_a ? m : k;  // row length of A as stored
  const int64_t ldb = transpose_b ? k : n;
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  // Rows of C are split, or columns when there are too few rows; else OpenBLAS decides.
  const bool split_rows = m >= kSplitMinimum * threads, split_columns = n >= kSplitMinimum * threads;
  if (threads == 1 || m * n * k < kSplitProducts || !(split_rows || split_columns)) {
    gemm_strided(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, n);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const auto [from, to] = share(split_rows ? m : n, t, threads);
    if (from == to) continue;
    if (split_rows)  // C[from:to, :] = A[from:to, :] B
      gemm_strided(transpose_a, transpose_b, to - from, n, k, alpha, transpose_a ? a + from : a + from * k, lda, b, ldb,
                   beta, c + from * n, n);
    else  // C[:, from:to] = A B[:, from:to]
      gemm_strided(transpose_a, transpose_b, m, to - from, k, alpha, a, lda, transpose_b ? b + from * k : b + from, ldb,
                   beta, c + from, n);
  }
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
