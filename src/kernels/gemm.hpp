#pragma once
// The one place minidl calls BLAS: row-major C = alpha op(A) op(B) + beta C.
#include <cstdint>
#include <vector>

namespace minidl::kernels {

/// A is (M, K) after op, B is (K, N) after op, C is (M, N); all contiguous row-major.
void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          const float* b, float beta, float* c);

/// gemm() hands BLAS one row times a matrix as a matrix-vector product where OpenBLAS runs
/// that faster on this core (gemm_form.cpp says where and why): by that rule (the default),
/// wherever it applies, or never. Tests and benchmarks force one.
enum class GemmRewrite { Rule, Always, Never };
void set_gemm_rewrite(GemmRewrite mode);

/// The same product as plain loops, the reference the BLAS path is tested against.
void gemm_reference(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    const float* b, float beta, float* c);

/// One gemm() call as a log saw it: its shape, and the addresses of its operands, so a
/// replay can give each buffer of the workload a buffer of its own (the same memory
/// footprint, not three buffers that stay in cache).
struct GemmCall {
  bool transpose_a, transpose_b;
  int64_t m, n, k;
  float beta;
  const float *a, *b, *c;
};

/// While `log` is set (not null), gemm() appends every call made on this thread to it.
/// The hook behind the benchmarks' GemmRecorder (bench/gemm_recorder.hpp).
void set_gemm_call_log(std::vector<GemmCall>* log);
/// Whether this thread's calls are being logged (callers then keep their calls on it).
bool gemm_calls_logged();

}  // namespace minidl::kernels
