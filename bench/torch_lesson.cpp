// torch_lesson: the lesson on the PyTorch C++ frontend (Debian's libtorch-dev 1.13), the
// reference for the whole `digits` process. The same experiment as bench/bench_pytorch.py
// and the digits program: 8 x [Linear(n, 64), norm, Tanh] + Linear(64, 10), SGD lr 0.05,
// batch 64 shuffled every epoch (last short batch kept), 5 epochs, seed 0, then in eval mode
// the loss over the training split and the accuracy over the validation split. The data is
// read by bench/lesson.hpp's reader, so both processes load it alike.
//   torch_lesson [--threads N (default 1)] [--norm none,batch,layer] [--batch-size 64] [--epochs 5]
//                [--repeats R: also time R passes in the process and print the best]
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "lesson.hpp"

namespace {

struct Options {
  int threads = 1;
  std::string norms = "none,batch,layer";
  int64_t batch_size = 64, epochs = 5;
  int repeats = 0;
  bool help = false;
};

torch::Tensor to_torch(const minidl::Tensor& t, torch::Dtype dtype) {
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < t.dim(); ++d) shape.push_back(t.size(d));
  return torch::from_blob(const_cast<float*>(t.data()), shape, torch::kFloat32).clone().to(dtype);
}

torch::nn::Sequential deep_net(const std::string& norm) {
  torch::nn::Sequential net;
  int64_t in = 64;
  for (int i = 0; i < 8; ++i) {
    net->push_back(torch::nn::Linear(in, 64));
    if (norm == "batch") net->push_back(torch::nn::BatchNorm1d(64));
    if (norm == "layer") net->push_back(torch::nn::LayerNorm(torch::nn::LayerNormOptions({64})));
    net->push_back(torch::nn::Tanh());
    in = 64;
  }
  net->push_back(torch::nn::Linear(64, 10));
  return net;
}

struct Split {
  torch::Tensor X_train, y_train, X_val, y_val;
};

int64_t run(const Split& s, const std::string& norm, const Options& o, bool verbose) {
  torch::manual_seed(0);
  auto model = deep_net(norm);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05));
  const int64_t n = s.X_train.size(0);
  int64_t steps = 0;
  for (int64_t epoch = 0; epoch < o.epochs; ++epoch) {
    model->train();
    const torch::Tensor order = torch::randperm(n);  // DataLoader(shuffle=True)
    for (int64_t first = 0; first < n; first += o.batch_size) {
      const torch::Tensor index = order.slice(0, first, std::min(n, first + o.batch_size));
      optimizer.zero_grad();
      torch::nn::functional::cross_entropy(model->forward(s.X_train.index_select(0, index)),
                                           s.y_train.index_select(0, index))
          .backward();
      optimizer.step();
      ++steps;
    }
  }
  model->eval();
  torch::NoGradGuard no_grad;
  const float accuracy = (model->forward(s.X_val).argmax(1) == s.y_val).to(torch::kFloat32).mean().item<float>();
  const float loss = torch::nn::functional::cross_entropy(model->forward(s.X_train), s.y_train).item<float>();
  if (verbose) std::printf("%-17s training loss %.3f   val accuracy %.3f\n", norm.c_str(), loss, accuracy);
  return steps;
}

Options parse(int argc, char** argv) {
  using minidl::bench::whole_number;
  Options o;
  if (argc == 2 && std::string(argv[1]) == "--help") {
    o.help = true;
    return o;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--threads") o.threads = int(whole_number(flag, value, 1));
    else if (flag == "--norm") o.norms = value;
    else if (flag == "--batch-size") o.batch_size = whole_number(flag, value, 1);
    else if (flag == "--epochs") o.epochs = whole_number(flag, value, 1);
    else if (flag == "--repeats") o.repeats = int(whole_number(flag, value, 0));
    else
      throw minidl::UsageError("unknown option " + flag +
                               " (the options: --threads, --norm, --batch-size, --epochs, --repeats)");
  }
  if (argc % 2 == 0) throw minidl::UsageError(std::string("the option ") + argv[argc - 1] + " has no value");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  return minidl::bench::run_program("torch_lesson", [&] {
    const Options o = parse(argc, argv);
    if (o.help) {
      std::printf("torch_lesson [--threads N] [--norm none,batch,layer] [--batch-size N] [--epochs N] [--repeats N]\n");
      return 0;
    }
    torch::set_num_threads(o.threads);
    const minidl::bench::LessonData d = minidl::bench::load_lesson_data(MINIDL_DATA_DIR);
    const Split s{to_torch(d.X_train, torch::kFloat32), to_torch(d.y_train, torch::kLong),
                  to_torch(d.X_val, torch::kFloat32), to_torch(d.y_val, torch::kLong)};
    std::vector<std::string> norms;
    std::stringstream list(o.norms);
    for (std::string name; std::getline(list, name, ',');) {
      if (name != "none" && name != "batch" && name != "layer")
        throw minidl::UsageError("--norm lists none, batch or layer, got " + name);
      norms.push_back(name);
    }
    int64_t steps = 0;
    for (const std::string& norm : norms) steps += run(s, norm, o, true);
    double best = 1e300;
    for (int r = 0; r < o.repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      for (const std::string& norm : norms) run(s, norm, o, false);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    if (o.repeats > 0)
      std::printf("torch_lesson wall %.1f ms %.1f us/step (%lld steps)\n", best * 1e3, best / double(steps) * 1e6,
                  static_cast<long long>(steps));
    return 0;
  });
}
