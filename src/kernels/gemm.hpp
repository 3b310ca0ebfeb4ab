#pragma once
// The one place minidl calls BLAS: row-major C = alpha op(A) op(B) + beta C.
#include <cstdint>

namespace minidl::kernels {

/// A is (M, K) after op, B is (K, N) after op, C is (M, N); all contiguous row-major. One row
/// times a matrix goes to BLAS in the form gemm_form.hpp chooses for this core. Outside a
/// parallel region, large products are split over OpenMP's threads by rows (or columns) of C.
void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          const float* b, float beta, float* c);

/// The same product on matrices inside larger row-major buffers: lda, ldb and ldc floats from
/// one stored row of A, B and C to the next (A's stored rows are K long, or M when transposed).
/// For the products of attention's heads, read in place from (B, T, 3C) and written to (B, T, C).
void gemm_strided(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

/// The same product as plain loops, the reference the BLAS path is tested against.
void gemm_reference(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    const float* b, float beta, float* c);

}  // namespace minidl::kernels
