// torch_charlm: charlm's model and training step on the PyTorch C++ frontend (Debian's
// libtorch-dev 1.13), the C++ reference for charlm's step. The model of
// scripts/charlm_model.py at charlm's defaults (pre-norm LayerNorm): x = wte(idx) +
// wpe(0..T-1), blocks of x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)), ln_f, lm_head (no
// bias); causal attention written out as nanoGPT's; the MLP c_fc, GELU (tanh), c_proj.
// A step: a batch of words from a permutation of the training split, padded to the longest
// word + 1 (inputs 0, targets -1), cross-entropy ignoring -1, zero_grad, backward, AdamW
// (lr 5e-4, betas 0.9, 0.99, eps 1e-8, weight decay 0.01).
//   torch_charlm [--threads 1] [--steps 200] [--repeats 1] [--width 64] [--layers 4]
//                [--heads 4] [--batch-size 32] [--data DIR]
// Each repeat builds a fresh model and times its steps (batches made included); prints the
// best repeat's wall and CPU time per step.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "timing.hpp"

namespace {

constexpr int64_t kVocab = 27, kBlockSize = 32;

struct Config {
  int64_t width = 64, layers = 4, heads = 4;
};

struct BlockImpl : torch::nn::Module {
  BlockImpl(const Config& c) : heads(c.heads) {
    const int64_t C = c.width;
    ln_1 = register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({C})));
    c_attn = register_module("c_attn", torch::nn::Linear(C, 3 * C));
    attn_proj = register_module("c_proj", torch::nn::Linear(C, C));
    ln_2 = register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({C})));
    c_fc = register_module("c_fc", torch::nn::Linear(C, 4 * C));
    mlp_proj = register_module("mlp_proj", torch::nn::Linear(4 * C, C));
  }
  torch::Tensor attention(const torch::Tensor& x) {  // (B, T, C) -> (B, T, C)
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
    std::vector<torch::Tensor> qkv = c_attn(x).split(C, 2);
    for (torch::Tensor& t : qkv) t = t.view({B, T, heads, C / heads}).transpose(1, 2);  // (B, H, T, D)
    torch::Tensor att = torch::matmul(qkv[0], qkv[1].transpose(-2, -1)) * (1.0 / std::sqrt(double(C / heads)));
    const torch::Tensor future = torch::ones({T, T}, torch::kBool).triu(1);
    att = torch::softmax(att.masked_fill(future, -INFINITY), -1);
    return attn_proj(torch::matmul(att, qkv[2]).transpose(1, 2).contiguous().view({B, T, C}));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = x + attention(ln_1(x));
    return x + mlp_proj(torch::gelu(c_fc(ln_2(x)), "tanh"));
  }
  int64_t heads;
  torch::nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  torch::nn::Linear c_attn{nullptr}, attn_proj{nullptr}, c_fc{nullptr}, mlp_proj{nullptr};
};
TORCH_MODULE(Block);

struct CharLMImpl : torch::nn::Module {
  explicit CharLMImpl(const Config& c) {
    wte = register_module("wte", torch::nn::Embedding(kVocab, c.width));
    wpe = register_module("wpe", torch::nn::Embedding(kBlockSize, c.width));
    for (int64_t i = 0; i < c.layers; ++i) blocks.push_back(register_module("h" + std::to_string(i), Block(c)));
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.width})));
    lm_head = register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(c.width, kVocab).bias(false)));
  }
  torch::Tensor forward(const torch::Tensor& idx) {  // (B, T) -> (B, T, V)
    torch::Tensor x = wte(idx) + wpe(torch::arange(idx.size(1)));
    for (Block& block : blocks) x = block(x);
    return lm_head(ln_f(x));
  }
  torch::nn::Embedding wte{nullptr}, wpe{nullptr};
  std::vector<Block> blocks;
  torch::nn::LayerNorm ln_f{nullptr};
  torch::nn::Linear lm_head{nullptr};
};
TORCH_MODULE(CharLM);

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw minidl::UsageError("cannot read " + path + " (--data names the directory of words.txt)");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

// The training words of the shipped split (data/words.txt, data/words_train_indices.txt).
std::vector<std::string> training_words(const std::string& dir) {
  const std::vector<std::string> words = read_lines(dir + "/words.txt");
  std::vector<std::string> train;
  for (const std::string& index : read_lines(dir + "/words_train_indices.txt"))
    train.push_back(words.at(std::stoul(index)));
  return train;
}

struct Batch {
  torch::Tensor x, y;  // (B, T) inputs and targets, T the longest word + 1
};

Batch make_batch(const std::vector<std::string>& words, const torch::Tensor& picks) {
  const int64_t B = picks.size(0);
  const auto* pick = picks.data_ptr<int64_t>();
  size_t longest = 0;
  for (int64_t i = 0; i < B; ++i) longest = std::max(longest, words[size_t(pick[i])].size());
  const auto T = int64_t(longest) + 1;
  Batch b{torch::zeros({B, T}, torch::kLong), torch::full({B, T}, -1, torch::kLong)};
  auto x = b.x.accessor<int64_t, 2>();
  auto y = b.y.accessor<int64_t, 2>();
  for (int64_t i = 0; i < B; ++i) {
    const std::string& word = words[size_t(pick[i])];
    for (size_t j = 0; j < word.size(); ++j) x[i][int64_t(j) + 1] = y[i][int64_t(j)] = word[j] - 'a' + 1;
    y[i][int64_t(word.size())] = 0;
  }
  return b;
}

// Wall and CPU seconds per step over `steps` steps of a fresh model.
minidl::bench::Timing time_steps(const std::vector<std::string>& words, const Config& c, int64_t steps,
                                 int64_t batch_size) {
  torch::manual_seed(0);
  CharLM model(c);
  torch::optim::AdamW optimizer(model->parameters(),
                                torch::optim::AdamWOptions(5e-4).betas({0.9, 0.99}).eps(1e-8).weight_decay(0.01));
  const auto n = int64_t(words.size());
  torch::Tensor order = torch::randperm(n);
  int64_t cursor = 0;
  const auto start = minidl::bench::Clock::now();
  const double cpu_start = minidl::bench::process_cpu_seconds();
  for (int64_t step = 0; step < steps; ++step) {
    if (cursor + batch_size > n) order = torch::randperm(n), cursor = 0;
    const Batch b = make_batch(words, order.slice(0, cursor, cursor + batch_size).contiguous());
    cursor += batch_size;
    const torch::Tensor logits = model(b.x);
    const torch::Tensor loss = torch::nn::functional::cross_entropy(
        logits.view({-1, kVocab}), b.y.view({-1}), torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
  return {minidl::bench::seconds_since(start) / double(steps),
          (minidl::bench::process_cpu_seconds() - cpu_start) / double(steps)};
}

cxxopts::Options command_line() {
  using cxxopts::value;
  cxxopts::Options options("torch_charlm", "charlm's model and training step on the PyTorch C++ frontend");
  options.add_options()("threads", "torch threads", value<int>()->default_value("1"))(
      "steps", "steps timed per repeat", value<int64_t>()->default_value("200"))(
      "repeats", "fresh models timed (the best counts)", value<int>()->default_value("1"))(
      "width", "channels", value<int64_t>()->default_value("64"))("layers", "blocks",
                                                                  value<int64_t>()->default_value("4"))(
      "heads", "attention heads", value<int64_t>()->default_value("4"))("batch-size", "words per batch",
                                                                        value<int64_t>()->default_value("32"))(
      "data", "directory of words.txt and its split", value<std::string>()->default_value(MINIDL_DATA_DIR));
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  return minidl::bench::run_program("torch_charlm", [&] {
    cxxopts::Options options = command_line();
    const auto args = minidl::bench::parse_or_help(options, argc, argv);
    if (!args) return 0;
    using minidl::bench::at_least;
    const Config c{at_least<int64_t>(*args, "width", 1), at_least<int64_t>(*args, "layers", 1),
                   at_least<int64_t>(*args, "heads", 1)};
    if (c.width % c.heads != 0)
      throw minidl::UsageError(minidl::cat("--heads ", c.heads, " does not divide --width ", c.width));
    const int64_t steps = at_least<int64_t>(*args, "steps", 1), batch = at_least<int64_t>(*args, "batch-size", 1);
    const int repeats = at_least<int>(*args, "repeats", 1);
    torch::set_num_threads(at_least<int>(*args, "threads", 1));
    const std::vector<std::string> words = training_words((*args)["data"].as<std::string>());
    minidl::bench::Timing best;
    for (int r = 0; r < repeats; ++r) {
      const minidl::bench::Timing t = time_steps(words, c, steps, batch);
      best = {std::min(best.wall, t.wall), std::min(best.cpu, t.cpu)};
    }
    std::printf("torch_charlm step %.3f ms (cpu %.3f ms), %lld steps, best of %d\n", best.wall * 1e3, best.cpu * 1e3,
                static_cast<long long>(steps), repeats);
    return 0;
  });
}
