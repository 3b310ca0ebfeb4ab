#pragma once
// How kernels::gemm hands a product to BLAS: as the sgemm it is, or in a form OpenBLAS runs
// faster for that shape on this core (gemm_form.cpp says which and why).
#include <cstdint>

#include "kernels/gemm.hpp"

namespace minidl::kernels {

enum class GemmForm {
  Gemm,      // cblas_sgemm as called
  RowTimesB  // one row (m == 1, A not transposed): cblas_sgemv
};

/// The form for gemm(transpose_a, _, m, n, k), by the rule or as forced by set_gemm_rewrite.
GemmForm choose_gemm_form(bool transpose_a, int64_t m, int64_t n, int64_t k);

/// Whether OpenBLAS runs its small-matrix kernels on this core (its SkylakeX, Cooperlake and
/// SapphireRapids builds; Zen 4 runs SkylakeX's): they multiply products of at most 10^6
/// multiply-adds without packing the operands. The other cores (Haswell: Zen 2) pack both
/// operands for every sgemm.
bool blas_has_small_matrix_kernels();

}  // namespace minidl::kernels
