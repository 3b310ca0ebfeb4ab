// bench_conv: the convolution workloads of docs/benchmarks.md, each printed as one line
// "<what> <case> ... <ms> ms" that bench/bench_conv_vs_pytorch.sh reads:
//   layer: Conv2d forward + backward on (32, 64, 32, 32), 3x3, 64 -> 64, padding 1, against
//          its GEMM floor (the sgemm calls alone, replayed in turn with the workload);
//   cnn:   the digits' CNN training step (forward, cross-entropy, backward, SGD) at batch 64;
//   tiny:  the digits' three convolutions (batch 64, 8x8) forward + backward, im2col + sgemm
//          against the direct loop, to choose the path for tiny images;
//   paths: 3x3 stride-1 convolutions over channels and image sizes, forward + backward on each
//          path's kernels in turn, im2col + sgemm against Winograd F(2x2, 3x3): the
//          measurements behind kernels::winograd_pays.
// tiny and paths call the library's private kernels (minidl_internal).
#include <cxxopts.hpp>
#include <iostream>
#include <sstream>
#include <tuple>

#include "cli.hpp"
#include "gemm_floor.hpp"
#include "kernels/conv/conv2d.hpp"
#include "kernels/conv/conv2d_path.hpp"
#include "kernels/conv/winograd.hpp"
#include "lesson.hpp"
#include "minidl/minidl.hpp"

using namespace minidl;

namespace {

void bench_layer(int repeats) {
  Generator gen(0);
  nn::Conv2d conv(nn::Conv2dOptions(64, 64, 3).padding(1), gen);
  Tensor x = Tensor::randn({32, 64, 32, 32}, gen).requires_grad_();
  const Tensor gout = Tensor::randn({32, 64, 32, 32}, gen);
  auto step = [&] {
    conv.zero_grad();
    x.zero_grad();
    conv(x).backward(gout);
  };
  step();
  const auto calls = bench::record_gemm_calls(step);
  const auto [run, floor] = bench::time_against_floor(repeats, step, calls);
  std::printf(
      "layer threads %d  wall %.2f ms  floor %.2f ms  ratio %.2f | cpu %.2f ms  floor %.2f ms  ratio %.2f  (%zu "
      "sgemm, %.1f GFLOP/s)\n",
      get_num_threads(), run.wall * 1e3, floor.wall * 1e3, run.wall / floor.wall, run.cpu * 1e3, floor.cpu * 1e3,
      run.cpu / floor.cpu, calls.size(), bench::gemm_flops(calls) / run.wall * 1e-9);
}

void bench_cnn(const std::string& norm_name, int repeats, int steps) {
  const bench::NormKind norm = bench::parse_norm(norm_name);
  Generator gen(0);
  auto model = bench::lesson_cnn(norm, gen);
  optim::SGD sgd(model->parameters(), {.lr = 0.05});
  const Tensor x = Tensor::rand({64, 64}, gen);  // the digits' pixels / 16 are in [0, 1]
  const Tensor y = Tensor::randint(0, 10, {64}, gen);
  auto epoch = [&] {
    for (int s = 0; s < steps; ++s) {
      sgd.zero_grad();
      cross_entropy((*model)(x), y).backward();
      sgd.step();
    }
  };
  epoch();
  const auto calls = bench::record_gemm_calls(epoch);
  const auto [t, floor] = bench::time_against_floor(repeats, epoch, calls);
  std::printf(
      "cnn %s  wall %.1f us/step | cpu %.1f us/step  floor %.1f us/step  ratio %.2f  (best of %d x %d steps, batch "
      "64, %zu sgemm a step)\n",
      norm_name.c_str(), t.wall / steps * 1e6, t.cpu / steps * 1e6, floor.cpu / steps * 1e6, t.cpu / floor.cpu, repeats,
      steps, calls.size() / size_t(steps));
}

void bench_tiny(int repeats) {
  const std::vector<std::pair<const char*, kernels::Conv2dGeometry>> shapes{{"conv1 1->16 8x8",
                                                                             {.batch = 64,
                                                                              .in_channels = 1,
                                                                              .in_h = 8,
                                                                              .in_w = 8,
                                                                              .out_channels = 16,
                                                                              .kernel_h = 3,
                                                                              .kernel_w = 3,
                                                                              .pad_h = 1,
                                                                              .pad_w = 1}},
                                                                            {"conv2 16->32 s2",
                                                                             {.batch = 64,
                                                                              .in_channels = 16,
                                                                              .in_h = 8,
                                                                              .in_w = 8,
                                                                              .out_channels = 32,
                                                                              .kernel_h = 3,
                                                                              .kernel_w = 3,
                                                                              .stride_h = 2,
                                                                              .stride_w = 2,
                                                                              .pad_h = 1,
                                                                              .pad_w = 1}},
                                                                            {"conv3 32->32 4x4",
                                                                             {.batch = 64,
                                                                              .in_channels = 32,
                                                                              .in_h = 4,
                                                                              .in_w = 4,
                                                                              .out_channels = 32,
                                                                              .kernel_h = 3,
                                                                              .kernel_w = 3,
                                                                              .pad_h = 1,
                                                                              .pad_w = 1}}};
  for (const auto& shape : shapes) {  // no structured binding: clang 14 cannot capture one in a lambda
    const char* name = shape.first;
    const kernels::Conv2dGeometry& g = shape.second;
    Generator gen(1);
    const Tensor x = Tensor::randn({g.batch, g.in_channels, g.in_h, g.in_w}, gen);
    const Tensor w = Tensor::randn({g.out_channels, g.in_channels, g.kernel_h, g.kernel_w}, gen);
    const Tensor b = Tensor::randn({g.out_channels}, gen);
    Tensor out = Tensor::empty({g.batch, g.out_channels, g.out_h(), g.out_w()});
    Tensor dx = Tensor::empty(x.shape()), dw = Tensor::empty(w.shape()), db = Tensor::empty(b.shape());
    Tensor cols = Tensor::empty({g.in_channels * g.kernel_h * g.kernel_w, g.batch * g.positions()});
    const auto time = [&](auto pass) {
      return bench::best_timing(repeats, [&] {
        for (int i = 0; i < 10; ++i) pass();
      });
    };
    // The im2col path as conv2d runs it: the forward keeps its columns for the weight gradient.
    const bench::Timing fast = time([&] {
      kernels::conv2d_forward(g, x.data(), w.data(), b.data(), out.data(), cols.data());
      kernels::conv2d_backward(g, x.data(), w.data(), out.data(), dx.data(), dw.data(), db.data(), cols.data());
    });
    const auto calls = bench::record_gemm_calls([&] {
      kernels::conv2d_forward(g, x.data(), w.data(), b.data(), out.data(), cols.data());
      kernels::conv2d_backward(g, x.data(), w.data(), out.data(), dx.data(), dw.data(), db.data(), cols.data());
    });
    bench::GemmReplay replay(calls);
    const bench::Timing floor = time(replay);
    // im2col and col2im alone, each path (conv2d picks one by kernels::im2col_gathers).
    const bench::Timing im2col_rows = time([&] { kernels::im2col_rows(g, x.data(), 0, g.batch, cols.data()); });
    const bench::Timing im2col_gather = time([&] { kernels::im2col_gather(g, x.data(), 0, g.batch, cols.data()); });
    const bench::Timing col2im_rows = time([&] { kernels::col2im_rows(g, cols.data(), 0, g.batch, dx.data()); });
    const bench::Timing col2im_gather = time([&] { kernels::col2im_gather(g, cols.data(), 0, g.batch, dx.data()); });
    const bench::Timing direct = time([&] {
      kernels::conv2d_forward_direct(g, x.data(), w.data(), b.data(), out.data());
      kernels::conv2d_backward_direct(g, x.data(), w.data(), out.data(), dx.data(), dw.data(), db.data());
    });
    std::printf(
        "tiny %-17s cpu: im2col+sgemm %7.1f us  floor %7.1f us  ratio %.2f | direct %8.1f us  direct / im2col "
        "%.1fx | im2col rows %6.1f us  gather %6.1f us | col2im rows %6.1f us  gather %6.1f us (%s)\n",
        name, fast.cpu / 10 * 1e6, floor.cpu / 10 * 1e6, fast.cpu / floor.cpu, direct.cpu / 10 * 1e6,
        direct.cpu / fast.cpu, im2col_rows.cpu / 10 * 1e6, im2col_gather.cpu / 10 * 1e6, col2im_rows.cpu / 10 * 1e6,
        col2im_gather.cpu / 10 * 1e6, kernels::im2col_gathers(g) ? "gathers" : "rows");
  }
}

// Forward + backward of one convolution on one path's kernels, as conv2d runs them, CPU time.
double conv_step_seconds(bool winograd, const kernels::Conv2dGeometry& g, int repeats) {
  Generator gen(3);
  const Tensor x = Tensor::randn({g.batch, g.in_channels, g.in_h, g.in_w}, gen);
  const Tensor w = Tensor::randn({g.out_channels, g.in_channels, 3, 3}, gen), b = Tensor::randn({g.out_channels}, gen);
  const Tensor gout = Tensor::randn({g.batch, g.out_channels, g.out_h(), g.out_w()}, gen);
  Tensor out = Tensor::empty(gout.shape()), dx = Tensor::empty(x.shape()), dw = Tensor::empty(w.shape()),
         db = Tensor::empty(b.shape());
  // conv2d keeps the forward's columns for the weight gradient when the batch is one chunk.
  Tensor cols = g.chunk() >= g.batch ? Tensor::empty({g.in_channels * 9, g.batch * g.positions()}) : Tensor();
  float* kept = cols.defined() ? cols.data() : nullptr;
  const auto step = [&] {
    for (int i = 0; i < 5; ++i) {
      if (winograd) {
        kernels::winograd_forward(g, x.data(), w.data(), b.data(), out.data());
        kernels::winograd_backward(g, x.data(), w.data(), gout.data(), dx.data(), dw.data(), db.data());
      } else {
        kernels::conv2d_forward(g, x.data(), w.data(), b.data(), out.data(), kept);
        kernels::conv2d_backward(g, x.data(), w.data(), gout.data(), dx.data(), dw.data(), db.data(), kept);
      }
    }
  };
  step();
  return bench::best_timing(repeats, step).cpu / 5;
}

void bench_paths(int repeats) {
  struct Shape4 {
    int64_t batch, cin, cout, side;
  };
  std::vector<Shape4> shapes{{64, 1, 16, 8}, {64, 32, 32, 4}};  // the digits' conv1 and conv3
  for (int64_t c : {3, 8, 16, 32, 64})
    for (int64_t side : {4, 6, 8, 16, 32}) shapes.push_back({std::max<int64_t>(1, 4096 / (side * side)), c, c, side});
  for (const Shape4& s : shapes) {
    const kernels::Conv2dGeometry g{.batch = s.batch,
                                    .in_channels = s.cin,
                                    .in_h = s.side,
                                    .in_w = s.side,
                                    .out_channels = s.cout,
                                    .kernel_h = 3,
                                    .kernel_w = 3,
                                    .pad_h = 1,
                                    .pad_w = 1};
    const double im2col = conv_step_seconds(false, g, repeats), winograd = conv_step_seconds(true, g, repeats);
    std::printf(
        "paths batch %3lld  %2lld -> %2lld  %2lldx%-2lld cpu: im2col %8.1f us  winograd %8.1f us  im2col / winograd "
        "%.2f  (rule: %s)\n",
        (long long)s.batch, (long long)s.cin, (long long)s.cout, (long long)s.side, (long long)s.side, im2col * 1e6,
        winograd * 1e6, im2col / winograd, kernels::winograd_pays(g) ? "winograd" : "im2col");
  }
}

}  // namespace

int run(int argc, char** argv) {
  cxxopts::Options options("bench_conv", "Conv2d and the digits' CNN: timings for docs/benchmarks.md.");
  options.add_options()("what", "layer, cnn, tiny or paths", cxxopts::value<std::string>()->default_value("layer"))(
      "norm", "cnn: comma list of norms", cxxopts::value<std::string>()->default_value("none,batch,group"))(
      "repeats", "timed repeats (the best counts)", cxxopts::value<int>()->default_value("5"))(
      "steps", "cnn: training steps a repeat", cxxopts::value<int>()->default_value("22"))(
      "threads", "threads for OpenMP and OpenBLAS", cxxopts::value<int>()->default_value("1"))("help",
                                                                                               "show this help");
  auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  set_num_threads(bench::at_least(args, "threads", 1));
  const std::string what = args["what"].as<std::string>();
  const int repeats = bench::at_least(args, "repeats", 1);
  if (what == "layer") {
    bench_layer(repeats);
  } else if (what == "cnn") {
    std::stringstream list(args["norm"].as<std::string>());
    for (std::string name; std::getline(list, name, ',');) bench_cnn(name, repeats, bench::at_least(args, "steps", 1));
  } else if (what == "tiny") {
    bench_tiny(repeats);
  } else if (what == "paths") {
    bench_paths(repeats);
  } else {
    throw UsageError(cat("--what must be layer, cnn, tiny or paths, got ", what));
  }
  return 0;
}

int main(int argc, char** argv) {
  return minidl::bench::run_program("bench_conv", [&] { return run(argc, argv); });
}
