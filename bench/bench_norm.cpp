// bench_norm: each norm layer's forward + backward (through the ops, as training runs
// them) on (4096, 1024) and (256, 64, 8, 8): time and the bandwidth of the bytes it must
// move, beside a plain copy of the same bytes; and on the lesson's (64, 64), where what
// counts is the time per call. Times are CPU time (the least of the
// repeats), steadier than wall time on a busy machine; run with --threads 1.
//   forward reads x, writes y; backward reads dy and x, writes dx: 5 tensors of x's size.
#include <algorithm>
#include <cstring>
#include <cxxopts.hpp>
#include <functional>
#include <iostream>
#include <sstream>

#include "cli.hpp"
#include "minidl/minidl.hpp"
#include "timing.hpp"

using namespace minidl;

namespace {

struct Case {
  const char* name;
  Shape shape;
  std::function<Tensor(const Tensor& x)> forward;  // the layer's op on x
};

int64_t channels_of(const Shape& s) { return s[1]; }

std::vector<Case> cases_for(const Shape& shape, const Tensor& weight_c, const Tensor& bias_c, const Tensor& weight_row,
                            const Tensor& bias_row, const Shape& row_shape) {
  // BatchNorm's running statistics are updated in place: fresh buffers per case are fine.
  Tensor running_mean = Tensor::zeros({channels_of(shape)});
  Tensor running_var = Tensor::ones({channels_of(shape)});
  const int64_t groups = shape.size() == 2 && shape[1] >= 1024 ? 32 : 8;  // the lesson's (64, 64): 8, as digits
  return {
      {"BatchNorm", shape,
       [=](const Tensor& x) { return batch_norm(x, running_mean, running_var, weight_c, bias_c, true, 0.1, 1e-5); }},
      {"LayerNorm", shape, [=](const Tensor& x) { return layer_norm(x, row_shape, weight_row, bias_row); }},
      {"RMSNorm", shape, [=](const Tensor& x) { return rms_norm(x, row_shape, weight_row); }},
      {"GroupNorm", shape, [=](const Tensor& x) { return group_norm(x, groups, weight_c, bias_c); }},
  };
}

void run_shape(const Shape& shape, int repeats) {
  // Small shapes: each timing covers enough calls to be well above the clock's grain.
  const int calls = int(std::max<int64_t>(1, (int64_t(1) << 20) / numel(shape)));
  Generator gen(0);
  const Shape row_shape(shape.begin() + 1, shape.end());  // LayerNorm/RMSNorm over all but the batch dim
  const int64_t c = channels_of(shape);
  Tensor weight_c = Tensor::randn({c}, gen).requires_grad_();
  Tensor bias_c = Tensor::randn({c}, gen).requires_grad_();
  Tensor weight_row = Tensor::randn(row_shape, gen).requires_grad_();
  Tensor bias_row = Tensor::randn(row_shape, gen).requires_grad_();
  Tensor x = Tensor::randn(shape, gen).requires_grad_();
  const Tensor dy = Tensor::randn(shape, gen);
  const double bytes = 5.0 * double(x.numel()) * sizeof(float);

  Tensor copy_src = Tensor::randn({x.numel() * 5 / 2}, gen), copy_dst = Tensor::empty({x.numel() * 5 / 2});
  const double copy_s =
      bench::best_timing(repeats,
                         [&] {
                           for (int i = 0; i < calls; ++i)
                             std::memcpy(copy_dst.data(), copy_src.data(), size_t(copy_src.numel()) * sizeof(float));
                         })
          .cpu /
      calls;
  std::printf("%s: plain copy of the same bytes %.3f ms, %.1f GB/s\n", to_string(shape).c_str(), copy_s * 1e3,
              bytes / copy_s * 1e-9);
  for (const Case& k : cases_for(shape, weight_c, bias_c, weight_row, bias_row, row_shape)) {
    auto pass = [&] {
      x.zero_grad();
      k.forward(x).backward(dy);
    };
    pass();
    const double forward_s = bench::best_timing(repeats,
                                                [&] {
                                                  NoGradGuard g;
                                                  for (int i = 0; i < calls; ++i) k.forward(x);
                                                })
                                 .cpu /
                             calls;
    const double both_s = bench::best_timing(repeats,
                                             [&] {
                                               for (int i = 0; i < calls; ++i) pass();
                                             })
                              .cpu /
                          calls;
    std::printf("  %-9s forward %.4f ms, forward + backward %.4f ms: %.1f GB/s, %.2f of the copy's\n", k.name,
                forward_s * 1e3, both_s * 1e3, bytes / both_s * 1e-9, copy_s / both_s);
  }
}

// "256x64x8x8" -> [256, 64, 8, 8]; at least 2 dims (N, C, ...).
Shape parse_shape(const std::string& text) {
  Shape shape;
  std::stringstream dims(text);
  for (std::string d; std::getline(dims, d, 'x');) {
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(d, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != d.size() || v <= 0) throw UsageError(cat("--shapes: expected dims like 256x64x8x8, got '", text, "'"));
    shape.push_back(v);
  }
  if (shape.size() < 2) throw UsageError(cat("--shapes: expected at least 2 dims (N, C, ...), got '", text, "'"));
  return shape;
}

}  // namespace

int run(int argc, char** argv) {
  cxxopts::Options options("bench_norm", "Norm layers' forward + backward bandwidth against a plain copy.");
  options.add_options()("repeats", "timed repeats (the best counts)", cxxopts::value<int>()->default_value("20"))(
      "shapes", "comma list of shapes, each dims joined by x",
      cxxopts::value<std::string>()->default_value("4096x1024,256x64x8x8,64x64"))(
      "threads", "threads for OpenMP and OpenBLAS", cxxopts::value<int>()->default_value("1"))("help",
                                                                                               "show this help");
  auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  set_num_threads(bench::at_least(args, "threads", 1));
  const int repeats = bench::at_least(args, "repeats", 1);
  std::vector<Shape> shapes;  // all parsed before any runs: a typo fails at once
  std::stringstream list(args["shapes"].as<std::string>());
  for (std::string item; std::getline(list, item, ',');) shapes.push_back(parse_shape(item));
  for (const Shape& shape : shapes) run_shape(shape, repeats);
  return 0;
}

int main(int argc, char** argv) {
  return minidl::bench::run_program("bench_norm", [&] { return run(argc, argv); });
}
