// bench_norm: each norm layer's forward + backward (through the ops, as training runs
// them) on (4096, 1024) and (256, 64, 8, 8): time and the bandwidth of the bytes it must
// move, beside a plain copy of the same bytes. Times are CPU time (the least of the
// repeats), steadier than wall time on a busy machine; run with --threads 1.
//   forward reads x, writes y; backward reads dy and x, writes dx: 5 tensors of x's size.
#include <cstring>
#include <cxxopts.hpp>
#include <functional>
#include <iostream>

#include "bench/timing.hpp"
#include "minidl/minidl.hpp"

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
  const int64_t groups = shape.size() == 2 ? 32 : 8;
  return {
      {"BatchNorm", shape,
       [=](const Tensor& x) { return batch_norm(x, running_mean, running_var, weight_c, bias_c, true, 0.1, 1e-5); }},
      {"LayerNorm", shape, [=](const Tensor& x) { return layer_norm(x, row_shape, weight_row, bias_row); }},
      {"RMSNorm", shape, [=](const Tensor& x) { return rms_norm(x, row_shape, weight_row); }},
      {"GroupNorm", shape, [=](const Tensor& x) { return group_norm(x, groups, weight_c, bias_c); }},
  };
}

void run_shape(const Shape& shape, int repeats) {
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
  const double copy_s = bench::best_timing(repeats, [&] {
    std::memcpy(copy_dst.data(), copy_src.data(), size_t(copy_src.numel()) * sizeof(float));
  }).cpu;
  std::printf("%s: plain copy of the same bytes %.3f ms, %.1f GB/s\n", to_string(shape).c_str(), copy_s * 1e3,
              bytes / copy_s * 1e-9);
  for (const Case& k : cases_for(shape, weight_c, bias_c, weight_row, bias_row, row_shape)) {
    auto pass = [&] {
      x.zero_grad();
      k.forward(x).backward(dy);
    };
    pass();
    const double forward_s = bench::best_timing(repeats, [&] { NoGradGuard g; k.forward(x); }).cpu;
    const double both_s = bench::best_timing(repeats, pass).cpu;
    std::printf("  %-9s forward %.3f ms, forward + backward %.3f ms: %.1f GB/s, %.2f of the copy's\n", k.name,
                forward_s * 1e3, both_s * 1e3, bytes / both_s * 1e-9, copy_s / both_s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("bench_norm", "Norm layers' forward + backward bandwidth against a plain copy.");
  options.add_options()
    ("repeats", "timed repeats (the best counts)", cxxopts::value<int>()->default_value("20"))
    ("threads", "threads for OpenMP and OpenBLAS", cxxopts::value<int>()->default_value("1"))
    ("help", "show this help");
  auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  set_num_threads(args["threads"].as<int>());
  const int repeats = args["repeats"].as<int>();
  for (const Shape& shape : {Shape{4096, 1024}, Shape{256, 64, 8, 8}}) run_shape(shape, repeats);
}
