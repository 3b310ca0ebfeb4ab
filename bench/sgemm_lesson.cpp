// sgemm_lesson: a bare program that makes a workload's sgemm calls and nothing else: the
// floor of a whole process. It links OpenBLAS only (not minidl): it reads a call log (the
// lesson's from bench_lesson --record-gemm, any program's from bench/gemm_shim.cpp's
// LD_PRELOAD shim, e.g. charlm's), gives every buffer of the workload one of its own
// (64-byte aligned, filled with 0.01, denormals flushed), and calls cblas_sgemm.
//   sgemm_lesson LOG [repeats, default 1]
// With repeats > 1 it also prints the fastest pass; the process itself is what
// bench/bench_all.sh times for the digits process, the fastest pass for charlm's step.
#include <cblas.h>
#include <xmmintrin.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli.hpp"
#include "gemm_log.hpp"
#include "timing.hpp"

namespace {

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], AlignedFree>;

Buffer filled_buffer(int64_t count) {
  const size_t bytes = (size_t(std::max<int64_t>(count, 1)) * sizeof(float) + 63) / 64 * 64;
  Buffer buffer(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (!buffer) throw std::bad_alloc();
  std::fill_n(buffer.get(), count, 0.01f);
  return buffer;
}

void replay(const minidl::bench::GemmLog& log, const std::vector<Buffer>& buffers) {
  for (const minidl::bench::LoggedGemm& c : log.calls) {
    if (c.m == 0 || c.n == 0 || c.k == 0) continue;
    cblas_sgemm(CblasRowMajor, c.transpose_a ? CblasTrans : CblasNoTrans, c.transpose_b ? CblasTrans : CblasNoTrans,
                int(c.m), int(c.n), int(c.k), 1.0f, buffers[size_t(c.a)].get(), int(c.transpose_a ? c.m : c.k),
                buffers[size_t(c.b)].get(), int(c.transpose_b ? c.k : c.n), c.beta, buffers[size_t(c.c)].get(),
                int(c.n));
  }
}

}  // namespace

int main(int argc, char** argv) {
  return minidl::bench::run_program("sgemm_lesson", [&] {
    if (argc == 2 && std::string(argv[1]) == "--help") {
      std::printf("usage: sgemm_lesson LOG [repeats]: replays LOG's sgemm calls (bench_lesson --record-gemm)\n");
      return 0;
    }
    if (argc < 2 || argc > 3) throw minidl::UsageError("usage: sgemm_lesson LOG [repeats]");
    const int repeats = argc == 3 ? int(minidl::bench::whole_number("repeats", argv[2], 1)) : 1;
    const minidl::bench::GemmLog log = minidl::bench::read_gemm_log(argv[1]);
    // Denormals are zero: the filler values, chained through thousands of products, would
    // shrink into denormals, which the lesson never meets (see bench/timing.hpp).
    _mm_setcsr(_mm_getcsr() | 0x8040);
    std::vector<Buffer> buffers;
    for (int64_t extent : log.extents) buffers.push_back(filled_buffer(extent));
    const minidl::bench::Timing best = minidl::bench::best_timing(repeats, [&] { replay(log, buffers); });
    std::printf("sgemm_lesson %zu sgemm on %zu buffers: best pass %.1f ms (cpu %.1f ms)\n", log.calls.size(),
                buffers.size(), best.wall * 1e3, best.cpu * 1e3);
    return 0;
  });
}
