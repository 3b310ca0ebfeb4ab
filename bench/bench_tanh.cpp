// tanh, float: nanoseconds a value for minidl's formula and for SLEEF's u10 (PyTorch's),
// timed in turn on 65536 values in [-5, 5]; with --all-floats, the largest error against
// double tanh over every float, and whether it ever decreases from one float to the next
// (docs/numerics.md). A kernel micro-benchmark: minidl_internal.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cxxopts.hpp>
#include <vector>

#include "cli.hpp"
#include "kernels/tanh.hpp"
#include "minidl/threads.hpp"
#include "timing.hpp"

namespace {

using Span = void (*)(float*, const float*, int64_t);

// |a - exact| in units of the spacing of floats at float(exact) (below 1, that below it).
double ulps(float a, double exact) {
  const float rounded = float(exact);
  if (a == rounded) return 0.0;
  const float magnitude = std::abs(rounded);
  const double ulp = magnitude == 1.0f ? double(1.0f - std::nextafter(1.0f, 0.0f))
                                       : double(std::nextafter(magnitude, 2.0f) - magnitude);
  return std::abs(double(a) - exact) / ulp;
}

// Every float from 0 up to 11 (tanh is odd; the formula takes |x|, and rounds to 1 past 9.02),
// in blocks through tanh_forward.
void sweep_all_floats() {
  constexpr uint32_t kEnd = 0x41300000u;  // 11.0f
  constexpr uint32_t kBlock = 1u << 16;
  std::vector<float> x(kBlock), y(kBlock);
  double worst = 0.0;
  float worst_at = 0.0f;
  float previous = 0.0f;
  int64_t decreases = 0;  // steps where tanh of the next float is smaller: 0 when monotonic
  for (uint32_t start = 0; start < kEnd; start += kBlock) {
    for (uint32_t i = 0; i < kBlock; ++i) {
      const uint32_t bits = start + i;
      std::memcpy(&x[i], &bits, sizeof(float));
    }
    minidl::kernels::tanh_forward(y.data(), x.data(), kBlock);
    for (uint32_t i = 0; i < kBlock; ++i) {
      const double error = ulps(y[i], std::tanh(double(x[i])));
      if (error > worst) worst = error, worst_at = x[i];
      decreases += y[i] < previous;
      previous = y[i];
    }
  }
  std::printf("every float in [0, 11]: worst error %.4f ulp at x = %.9g; %lld decreasing steps\n", worst, worst_at,
              static_cast<long long>(decreases));
}

}  // namespace

int run(int argc, char** argv) {
  cxxopts::Options options("bench_tanh", "tanh: ns a value, against SLEEF's, and its error over every float");
  options.add_options()("repeats", "timed repeats", cxxopts::value<int>()->default_value("200"))(
      "all-floats", "measure the error over every float in [0, 11]")("h,help", "this help");
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::printf("%s\n", options.help().c_str());
    return 0;
  }
  minidl::set_num_threads(1);
  constexpr int64_t n = 65536;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = -5.0f + 10.0f * float(i) / float(n);
  struct Build {
    const char* name;
    Span span;
  };
  const std::vector<Build> builds{{"SLEEF Sleef_tanhf8_u10 (PyTorch's)", minidl::kernels::tanh_span_sleef},
                                  {"minidl", minidl::kernels::tanh_forward}};
  std::vector<double> best(builds.size(), 1e30);
  const int repeats = minidl::bench::at_least(args, "repeats", 1);
  for (int r = 0; r < repeats; ++r)  // in turn, so the machine's load touches each alike
    for (size_t b = 0; b < builds.size(); ++b) {
      const minidl::bench::Timing t = minidl::bench::best_timing(1, [&] { builds[b].span(y.data(), x.data(), n); });
      best[b] = std::min(best[b], t.cpu);
    }
  for (size_t b = 0; b < builds.size(); ++b)
    std::printf("%-36s %6.3f ns a value (%.2fx SLEEF's time)\n", builds[b].name, best[b] / double(n) * 1e9,
                best[b] / best[0]);
  if (args.count("all-floats")) sweep_all_floats();
  return 0;
}

int main(int argc, char** argv) {
  return minidl::bench::run_program("bench_tanh", [&] { return run(argc, argv); });
}
