#pragma once
// How kernels::gemm hands a product to BLAS: as the sgemm it is, or in a form OpenBLAS runs
// faster for that shape on this core (gemm_form.cpp says which and why).
#include <cstdint>

namespace minidl::kernels {

enum class GemmForm {
  Gemm,      // cblas_sgemm as called
  RowTimesB  // one row (m == 1, A not transposed): cblas_sgemv
};

/// The form gemm(transpose_a, _, m, n, k) hands BLAS on this core.
GemmForm choose_gemm_form(bool transpose_a, int64_t m, int64_t n, int64_t k);

/// The RowTimesB form: c (1, n) = alpha a (1, k) op(B) + beta c through cblas_sgemv, op(B) (k, n).
void gemm_row_as_gemv(bool transpose_b, int64_t n, int64_t k, float alpha, const float* a, const float* b, float beta,
                      float* c);

/// Whether OpenBLAS runs its small-matrix kernels on this core (its SkylakeX, Cooperlake and
/// SapphireRapids builds; Zen 4 runs SkylakeX's): they multiply products of at most 10^6
/// multiply-adds without packing the operands. The other cores (Haswell: Zen 2) pack both
/// operands for every sgemm.
bool blas_has_small_matrix_kernels();

}  // namespace minidl::kernels
