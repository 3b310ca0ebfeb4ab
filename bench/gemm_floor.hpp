#pragma once
// The "GEMM floor" of a workload: the time the matrix products it made take when replayed
// alone, same shapes, same process (the calls logged by gemm_recorder.hpp's link seam).
#include <xmmintrin.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "gemm_recorder.hpp"
#include "minidl/tensor/tensor.hpp"
#include "timing.hpp"

namespace minidl::bench {

/// Runs f once under a GemmRecorder and returns the BLAS products it made.
template <typename F>
std::vector<GemmCall> record_gemm_calls(F&& f) {
  GemmRecorder recorder;
  f();
  return recorder.calls();
}

/// While alive, denormal inputs read as zero and denormal results are flushed to zero on
/// this thread (MXCSR's DAZ and FTZ). A replay chains thousands of products of its filler
/// values through buffers the workload reused, so they shrink into denormals, which Intel
/// cores compute about 100x slower: without this the lesson's replay took longer than the
/// lesson itself. The workload never meets denormals, so its floor must not either.
class FlushDenormals {
 public:
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040); }  // FTZ (bit 15) | DAZ (bit 6)
  ~FlushDenormals() { _mm_setcsr(saved_); }
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  unsigned saved_;
};

/// A replay of `calls` through OpenBLAS. Every buffer the workload used gets one of its
/// own, as large as its largest use (small values, so no denormals or infinities): the replay
/// moves the same bytes through the caches as the workload did.
class GemmReplay {
 public:
  explicit GemmReplay(const std::vector<GemmCall>& calls) : calls_(calls) {
    std::map<const float*, int64_t> extents;  // workload address -> values used from it
    auto use = [&](const float* address, int64_t count) {
      int64_t& extent = extents[address];
      extent = std::max(extent, count);
    };
    for (const GemmCall& c : calls_) {
      use(c.a, c.m * c.k);
      use(c.b, c.k * c.n);
      use(c.c, c.m * c.n);
    }
    for (const auto& [address, extent] : extents) buffers_.emplace(address, Tensor::full({extent}, 0.01f));
    for (const GemmCall& c : calls_)
      operands_.push_back({buffers_.at(c.a).data(), buffers_.at(c.b).data(), buffers_.at(c.c).data()});
  }

  void operator()() {
    const FlushDenormals flush;
    for (size_t i = 0; i < calls_.size(); ++i) {
      const GemmCall& c = calls_[i];
      const Operands& o = operands_[i];
      replay_gemm(c, o.a, o.b, o.c);
    }
  }

 private:
  struct Operands {
    const float *a, *b;
    float* c;
  };
  std::vector<GemmCall> calls_;
  std::map<const float*, Tensor> buffers_;  // 64-byte aligned, as the workload's
  std::vector<Operands> operands_;
};

/// The best of `repeats` timings of the workload and of its GEMM floor, the two taken in
/// turn: a change in the machine's load touches both figures alike.
template <typename F>
std::pair<Timing, Timing> time_against_floor(int repeats, F&& workload, const std::vector<GemmCall>& calls) {
  GemmReplay replay(calls);
  Timing run, floor;
  for (int r = 0; r < repeats; ++r) {
    const Timing w = best_timing(1, workload), g = best_timing(1, replay);
    run = {std::min(run.wall, w.wall), std::min(run.cpu, w.cpu)};
    floor = {std::min(floor.wall, g.wall), std::min(floor.cpu, g.cpu)};
  }
  return {run, floor};
}

inline double gemm_flops(const std::vector<GemmCall>& calls) {
  double flops = 0.0;
  for (const GemmCall& c : calls) flops += 2.0 * double(c.m) * double(c.n) * double(c.k);
  return flops;
}

}  // namespace minidl::bench
