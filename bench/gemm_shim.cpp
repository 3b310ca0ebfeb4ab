// libgemm_shim.so: the sgemm calls of any program, watched from outside it. Preloaded, it
// interposes OpenBLAS's cblas_sgemm (found again with dlsym(RTLD_NEXT)), logs each call and
// forwards it; at exit it writes the log in bench/gemm_log.hpp's format, which sgemm_replay
// replays alone (the program's sgemm floor):
//   MINIDL_GEMM_LOG=FILE LD_PRELOAD=build/bench/libgemm_shim.so PROGRAM ARGS...
// The log holds contiguous row-major operands (leading dimension = row length): a strided
// one (attention's heads inside a packed buffer) is replayed contiguous, with the same sizes,
// at the start of the buffer that holds it (bench/gemm_log.hpp), and the count of such calls
// is reported on stderr at exit. A cblas_sgemv call has no place in the log: those are
// counted and reported too, so a floor that misses them says so.
#include <cblas.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <vector>

#include "gemm_log.hpp"

namespace {

struct Call {  // what make_gemm_log reads
  bool transpose_a, transpose_b;
  int64_t m, n, k;
  float beta;
  const float *a, *b, *c;
  bool contiguous;  // every leading dimension is its operand's row length
};

using SgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint, float, const float*,
                         blasint, const float*, blasint, float, float*, blasint);
using SgemvFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, blasint, blasint, float, const float*, blasint, const float*,
                         blasint, float, float*, blasint);

template <typename Fn>
Fn next_definition(const char* name) {
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  if (fn == nullptr) {
    std::fprintf(stderr, "gemm_shim: no %s after the shim (is the program linked with OpenBLAS?)\n", name);
    std::abort();
  }
  return fn;
}

// Every call of the process, kept until exit; written by the destructor.
class Recording {
 public:
  void add(const Call& call) {
    const std::lock_guard<std::mutex> lock(mutex_);
    calls_.push_back(call);
    if (!call.contiguous) ++strided_;
  }
  void count_sgemv() {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++sgemv_;
  }
  ~Recording() {
    const char* path = std::getenv("MINIDL_GEMM_LOG");
    if (path == nullptr || *path == '\0') {
      std::fprintf(stderr, "gemm_shim: MINIDL_GEMM_LOG is not set: %zu sgemm calls not written\n", calls_.size());
      return;
    }
    try {
      minidl::bench::write_gemm_log(minidl::bench::make_gemm_log(calls_), path);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gemm_shim: %s\n", e.what());
    }
    if (strided_ > 0)
      std::fprintf(stderr, "gemm_shim: %zu sgemm calls had strided operands: logged contiguous, with their sizes\n",
                   strided_);
    if (sgemv_ > 0) std::fprintf(stderr, "gemm_shim: %zu cblas_sgemv calls are not in the log\n", sgemv_);
  }

 private:
  std::mutex mutex_;
  std::vector<Call> calls_;
  size_t strided_ = 0, sgemv_ = 0;
};

Recording recording;

}  // namespace

extern "C" {

void cblas_sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
                 float alpha, const float* a, blasint lda, const float* b, blasint ldb, float beta, float* c,
                 blasint ldc) {
  static const SgemmFn real = next_definition<SgemmFn>("cblas_sgemm");
  const bool trans_a = ta == CblasTrans, trans_b = tb == CblasTrans;
  const bool contiguous = order == CblasRowMajor && lda == (trans_a ? m : k) && ldb == (trans_b ? k : n) && ldc == n;
  recording.add({trans_a, trans_b, m, n, k, beta, a, b, c, contiguous});
  real(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cblas_sgemv(CBLAS_ORDER order, CBLAS_TRANSPOSE trans, blasint m, blasint n, float alpha, const float* a,
                 blasint lda, const float* x, blasint incx, float beta, float* y, blasint incy) {
  static const SgemvFn real = next_definition<SgemvFn>("cblas_sgemv");
  recording.count_sgemv();
  real(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
}
