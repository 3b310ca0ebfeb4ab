#include "gemm_recorder.hpp"

#include <cblas.h>

#include <mutex>

namespace {

std::mutex log_mutex;                                        // guards active_log
std::vector<minidl::bench::GemmCall>* active_log = nullptr;  // the live recorder's, or null

void record(const minidl::bench::GemmCall& call) {
  const std::lock_guard<std::mutex> lock(log_mutex);
  if (active_log != nullptr) active_log->push_back(call);
}

}  // namespace

// The linker's --wrap names: the library's calls to cblas_sgemm and cblas_sgemv arrive here,
// and __real_ reaches OpenBLAS. The library passes contiguous operands (leading dimension =
// row length), which is what a replay assumes.
extern "C" {
void __real_cblas_sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
                        float alpha, const float* a, blasint lda, const float* b, blasint ldb, float beta, float* c,
                        blasint ldc);
void __real_cblas_sgemv(CBLAS_ORDER order, CBLAS_TRANSPOSE trans, blasint m, blasint n, float alpha, const float* a,
                        blasint lda, const float* x, blasint incx, float beta, float* y, blasint incy);

void __wrap_cblas_sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
                        float alpha, const float* a, blasint lda, const float* b, blasint ldb, float beta, float* c,
                        blasint ldc) {
  record({ta == CblasTrans, tb == CblasTrans, m, n, k, beta, a, b, c});
  __real_cblas_sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// y = op(A) x with A (m, n) is the row x^T times op(A)^T: NoTrans is transpose_b (n = m rows).
void __wrap_cblas_sgemv(CBLAS_ORDER order, CBLAS_TRANSPOSE trans, blasint m, blasint n, float alpha, const float* a,
                        blasint lda, const float* x, blasint incx, float beta, float* y, blasint incy) {
  const bool transpose_b = trans == CblasNoTrans;
  record({false, transpose_b, 1, transpose_b ? m : n, transpose_b ? n : m, beta, x, a, y, true});
  __real_cblas_sgemv(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
}

namespace minidl::bench {

GemmRecorder::GemmRecorder() {
  const std::lock_guard<std::mutex> lock(log_mutex);
  active_log = &calls_;
}

GemmRecorder::~GemmRecorder() {
  const std::lock_guard<std::mutex> lock(log_mutex);
  active_log = nullptr;
}

std::vector<GemmCall> GemmRecorder::calls() const {
  const std::lock_guard<std::mutex> lock(log_mutex);
  return calls_;
}

void replay_gemm(const GemmCall& call, const float* a, const float* b, float* c) {
  const auto m = int(call.m), n = int(call.n), k = int(call.k);
  if (call.gemv) {  // c (n) = op(B)^T a, B stored (n, k) when transpose_b, else (k, n)
    cblas_sgemv(CblasRowMajor, call.transpose_b ? CblasNoTrans : CblasTrans, call.transpose_b ? n : k,
                call.transpose_b ? k : n, 1.0f, b, call.transpose_b ? k : n, a, 1, call.beta, c, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, call.transpose_a ? CblasTrans : CblasNoTrans, call.transpose_b ? CblasTrans : CblasNoTrans,
              m, n, k, 1.0f, a, call.transpose_a ? m : k, b, call.transpose_b ? k : n, call.beta, c, n);
}

}  // namespace minidl::bench
