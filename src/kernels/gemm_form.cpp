#include "kernels/gemm_form.hpp"

#include <cblas.h>

#include <atomic>
#include <string_view>

namespace minidl::kernels {
namespace {

std::atomic<GemmRewrite> rewrite_mode{GemmRewrite::Rule};  // set_gemm_rewrite's choice

// One row times a matrix: packing costs more than the row's products, except within the
// small-matrix kernels' window of 10^6 multiply-adds (docs/benchmarks.md, "One row times a matrix").
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

void set_gemm_rewrite(GemmRewrite mode) { rewrite_mode.store(mode); }

GemmForm choose_gemm_form(bool transpose_a, int64_t m, int64_t n, int64_t k) {
  switch (rewrite_mode.load(std::memory_order_relaxed)) {
    case GemmRewrite::Never:
      return GemmForm::Gemm;
    case GemmRewrite::Always:
      return m == 1 && !transpose_a ? GemmForm::RowTimesB : GemmForm::Gemm;
    case GemmRewrite::Rule:
      break;
  }
  return row_as_gemv(transpose_a, m, n, k) ? GemmForm::RowTimesB : GemmForm::Gemm;
}

}  // namespace minidl::kernels
