#pragma once
// Benchmark tooling: logs the GEMM calls a workload makes, so that bench/timing.hpp can
// replay the same products alone (the workload's "GEMM floor").
#include <vector>

#include "kernels/gemm.hpp"

namespace minidl::bench {

using kernels::GemmCall;

/// While alive, logs every kernels::gemm() call made on this thread. Recorders do not nest.
class GemmRecorder {
 public:
  GemmRecorder() { kernels::set_gemm_call_log(&calls_); }
  ~GemmRecorder() { kernels::set_gemm_call_log(nullptr); }
  GemmRecorder(const GemmRecorder&) = delete;
  GemmRecorder& operator=(const GemmRecorder&) = delete;
  const std::vector<GemmCall>& calls() const { return calls_; }

 private:
  std::vector<GemmCall> calls_;
};

}  // namespace minidl::bench
