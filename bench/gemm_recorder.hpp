#pragma once
// Benchmark tooling: logs the matrix products a workload hands BLAS, so that gemm_floor.hpp
// can replay the same products alone (the workload's "GEMM floor"). It watches from outside
// the library, through the linker: a program built with gemm_recorder.cpp links with
// -Wl,--wrap=cblas_sgemm,--wrap=cblas_sgemv (bench/CMakeLists.txt), so each call the
// static library makes to either runs through the wrappers there, which log it while a
// GemmRecorder is alive and then call OpenBLAS.
#include <cstdint>
#include <vector>

namespace minidl::bench {

/// One product as C (m, n) = op(A) (m, k) op(B) (k, n) + beta C, contiguous row-major, with
/// its operands' addresses, so a replay can give each buffer of the workload a buffer of its
/// own (the same memory footprint, not three buffers that stay in cache). A cblas_sgemv
/// call is the one-row product it computes (m = 1, gemv set) and is replayed as sgemv.
struct GemmCall {
  bool transpose_a, transpose_b;
  int64_t m, n, k;
  float beta;
  const float *a, *b, *c;
  bool gemv = false;
};

/// While alive, logs every BLAS product the process makes, on any thread. Recorders do not nest.
class GemmRecorder {
 public:
  GemmRecorder();
  ~GemmRecorder();
  GemmRecorder(const GemmRecorder&) = delete;
  GemmRecorder& operator=(const GemmRecorder&) = delete;
  /// The calls so far, in the order they were made.
  std::vector<GemmCall> calls() const;

 private:
  std::vector<GemmCall> calls_;
};

/// Makes `call` on the buffers a, b, c (each as large as the call reads or writes there),
/// through OpenBLAS as the workload made it.
void replay_gemm(const GemmCall& call, const float* a, const float* b, float* c);

}  // namespace minidl::bench
