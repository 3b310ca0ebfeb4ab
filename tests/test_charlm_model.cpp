// charlm's model (apps/charlm): state_dict names, the key/value cache against a full
// forward, padding, a block's norm order, the batches it trains on, a training run that
// follows its batch order, and sampling's distribution.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>

#include "data/words.hpp"
#include "models/charlm_model.hpp"
#include "sample.hpp"
#include "support/check.hpp"
#include "support/chi_square.hpp"
#include "training/charlm_train.hpp"

namespace test_charlm_model {

using namespace minidl;
using namespace minidl::charlm;
using minidl::testing::check_close;
using minidl::testing::chi_square;

namespace {

constexpr NormKind kAllNorms[] = {NormKind::Layer,       NormKind::RMS,  NormKind::Batch,
                                  NormKind::BatchMasked, NormKind::None, NormKind::DyT};

// Small enough to run in milliseconds; two heads and two blocks keep every path.
ModelOptions small_model(NormKind norm, Position position) {
  return {.block_size = 12, .layers = 2, .heads = 2, .width = 16, .norm = norm, .position = position};
}

// Running statistics away from 0 and 1, so eval-mode BatchNorm does something.
void set_running_stats(CharTransformer& model, Generator& gen) {
  for (auto& [name, buffer] : model.named_buffers()) {
    if (name.ends_with("running_mean")) buffer.copy_(Tensor::randn(buffer.shape(), gen, 0.0f, 0.5f));
    if (name.ends_with("running_var")) buffer.copy_(Tensor::rand(buffer.shape(), gen, 0.5f, 2.0f));
  }
}

// Both bounds from float32, whatever the summation order: each logit is a few layers of dot
// products of at most 4C = 64 terms, each rounded within 64 u sum |a_i b_i| (u = 6e-8, so
// 4e-6 of sums of magnitude below 10: 4e-5), and the two paths sum in other orders (gemm
// shapes differ); softmax and the norms add a few u relative. 1e-4 absolute and relative
// holds that with room, and is far below any wrong mask or cache (differences of 0.1 and up).
constexpr double kAtol = 1e-4, kRtol = 1e-4;

const std::vector<std::string> kWords{"ab", "abc", "hello", "z", "world", "cab", "tree", "zebra"};

}  // namespace

TEST_CASE("charlm model: state_dict names and shapes are makemore's", "[charlm]") {
  Generator gen(0);
  CharTransformer pre(ModelOptions{}, gen);
  const nn::StateDict state = pre.state_dict();
  REQUIRE(state.size() == 2 + 4 * 12 + 2 + 1);
  CHECK(state[0].name == "transformer.wte.weight");
  CHECK(state[0].value.shape() == Shape{27, 64});
  CHECK(state[1].name == "transformer.wpe.weight");
  CHECK(state[1].value.shape() == Shape{32, 64});
  CHECK(state[2].name == "transformer.h.0.ln_1.weight");
  CHECK(state[4].name == "transformer.h.0.attn.c_attn.weight");
  CHECK(state[4].value.shape() == Shape{192, 64});
  CHECK(state[6].name == "transformer.h.0.attn.c_proj.weight");
  CHECK(state[10].name == "transformer.h.0.mlp.c_fc.weight");
  CHECK(state[10].value.shape() == Shape{256, 64});
  CHECK(state[12].name == "transformer.h.0.mlp.c_proj.weight");
  CHECK(state[12].value.shape() == Shape{64, 256});
  CHECK(state[50].name == "transformer.ln_f.weight");
  CHECK(state.back().name == "lm_head.weight");
  CHECK(state.back().value.shape() == Shape{27, 64});

  CharTransformer post({.position = Position::Post}, gen);
  CHECK(post.state_dict().size() == state.size() - 2);  // no ln_f after post-norm blocks
  CharTransformer none({.norm = NormKind::None}, gen);
  CHECK(none.state_dict().size() == 2 + 4 * 8 + 1);
  CharTransformer batch({.norm = NormKind::BatchMasked}, gen);
  CHECK(batch.state_dict()[4].name == "transformer.h.0.ln_1.running_mean");
  CHECK(batch.state_dict()[6].name == "transformer.h.0.ln_1.num_batches_tracked");
}

TEST_CASE("charlm model: the same seed draws the same weights, wte and wpe from N(0, 1)", "[charlm]") {
  Generator a(3), b(3);
  const nn::StateDict first = CharTransformer(ModelOptions{}, a).state_dict();
  const nn::StateDict second = CharTransformer(ModelOptions{}, b).state_dict();
  for (size_t i = 0; i < first.size(); ++i) CHECK(first[i].value.to_vector() == second[i].value.to_vector());
  Generator draw(3);
  CHECK(first[0].value.to_vector() == Tensor::randn({27, 64}, draw).to_vector());
}

// Width 64: each weight has at least 4,096 values, so the sample std of U(-a, a) is within
// 5% of a / sqrt 3 (its relative standard error is sqrt(0.2 / n) < 0.7%) and the largest
// |w| above 0.99 a (the chance it is not: 0.99^4096 < 1e-17).
TEST_CASE(
    "charlm model: --init xavier redraws the blocks' Linear weights within xavier's bound, the rest as makemore's",
    "[charlm]") {
  Generator a(5), b(5);
  const nn::StateDict makemore = CharTransformer(ModelOptions{}, a).state_dict();
  const nn::StateDict xavier = CharTransformer({.init = Init::Xavier}, b).state_dict();
  REQUIRE(makemore.size() == xavier.size());
  int redrawn = 0;
  for (size_t i = 0; i < xavier.size(); ++i) {
    const std::string& name = xavier[i].name;
    INFO(name);
    const bool block_linear = name.find(".attn.") != std::string::npos || name.find(".mlp.") != std::string::npos;
    if (!block_linear) {
      CHECK(xavier[i].value.to_vector() == makemore[i].value.to_vector());
      continue;
    }
    const std::vector<float> values = xavier[i].value.to_vector();
    if (name.ends_with(".bias")) {
      CHECK(values == std::vector<float>(values.size(), 0.0f));
      continue;
    }
    ++redrawn;
    const Shape shape = xavier[i].value.shape();  // (fan_out, fan_in)
    const double bound = std::sqrt(6.0 / double(shape[0] + shape[1]));
    double squares = 0.0, largest = 0.0;
    for (float v : values) squares += double(v) * v, largest = std::max(largest, std::abs(double(v)));
    CHECK(largest <= bound);
    CHECK(largest > 0.99 * bound);
    CHECK(std::sqrt(squares / double(values.size())) == Approx(bound / std::sqrt(3.0)).epsilon(0.05));
    double makemore_largest = 0.0;  // nn.Linear's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    for (float v : makemore[i].value.to_vector()) makemore_largest = std::max(makemore_largest, std::abs(double(v)));
    CHECK(makemore_largest <= 1.0 / std::sqrt(double(shape[1])));
  }
  CHECK(redrawn == 4 * 4);  // c_attn, attn.c_proj, c_fc, mlp.c_proj in each of 4 blocks
}

TEST_CASE("charlm model: the key/value cache gives a full forward's logits, every norm and position", "[charlm]") {
  const std::vector<float> prefix{0, 8, 5, 12, 12, 15, 3, 20};  // ".helloct" as tokens
  for (NormKind norm : kAllNorms)
    for (Position position : {Position::Pre, Position::Post}) {
      INFO(run_name(norm, position));
      Generator gen(1);
      CharTransformer model(small_model(norm, position), gen);
      set_running_stats(model, gen);
      model.eval();
      NoGradGuard no_grad;
      const auto t = int64_t(prefix.size());
      const Tensor full = model.forward(Tensor::from_vector(prefix, {1, t}));  // (1, T, V)
      KVCache cache;
      std::vector<Tensor> steps;
      for (int64_t i = 0; i < t; ++i)
        steps.push_back(model.step(Tensor::full({1, 1}, prefix[size_t(i)]), i, cache).reshape({1, 1, kVocabSize}));
      check_close(cat(steps, 1), full, kAtol, kRtol);
      CHECK(cache.size() == 2);
      CHECK(cache[0].qkv.shape() == Shape{1, t, 3 * 16});  // every position's q, k, v (C = 16)
    }
}

TEST_CASE("charlm model: padding changes neither the loss nor the real positions' logits", "[charlm]") {
  // layer, rms, batch-masked and none in training mode: the same words padded 5 positions
  // further. (batch's statistics count the padding: it is the norm that fails this.)
  const std::vector<int64_t> picks{0, 2, 3, 6};
  const Batch tight = make_batch(kWords, picks), loose = make_batch(kWords, picks, tight.x.size(1) + 5);
  for (NormKind norm : {NormKind::Layer, NormKind::RMS, NormKind::BatchMasked, NormKind::None})
    for (Position position : {Position::Pre, Position::Post}) {
      INFO(run_name(norm, position));
      Generator gen(2);
      CharTransformer model(small_model(norm, position), gen);
      const Tensor a = model.forward(tight.x, tight.mask), b = model.forward(loose.x, loose.mask);
      check_close(narrow(b, 1, 0, tight.x.size(1)), a, kAtol, kRtol);
      const CrossEntropyOptions ignore_padding{.ignore_index = -1};
      const float loss_a = cross_entropy(a.reshape({-1, kVocabSize}), tight.y, ignore_padding).item();
      const float loss_b = cross_entropy(b.reshape({-1, kVocabSize}), loose.y, ignore_padding).item();
      CHECK(loss_b == Approx(loss_a).epsilon(kRtol));
    }
}

TEST_CASE("charlm model: in eval mode a longer batch mate changes no word's logits, every norm", "[charlm]") {
  const Batch alone = make_batch(kWords, {0, 3}), joined = make_batch(kWords, {0, 3, 7});
  for (NormKind norm : kAllNorms) {
    INFO(short_name(norm));
    Generator gen(4);
    CharTransformer model(small_model(norm, Position::Pre), gen);
    set_running_stats(model, gen);
    model.eval();
    const Tensor a = model.forward(alone.x, alone.mask), b = model.forward(joined.x, joined.mask);
    check_close(narrow(narrow(b, 0, 0, 2), 1, 0, alone.x.size(1)), a, kAtol, kRtol);
  }
}

TEST_CASE("charlm words: a batch is [0, word] and [word, 0], padded with 0 and -1", "[charlm]") {
  const Batch batch = make_batch({"ab", "c"}, {0, 1});
  CHECK(batch.x.shape() == Shape{2, 3});
  CHECK(batch.x.to_vector() == std::vector<float>{0, 1, 2, 0, 3, 0});
  CHECK(batch.y.to_vector() == std::vector<float>{1, 2, 0, 3, 0, -1});
  CHECK(batch.tokens == 5);
  CHECK(batch.mask.real_rows.to_vector() == std::vector<float>{0, 1, 2, 3, 4});
  CHECK(batch.mask.output_rows.to_vector() == std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(word_of({8, 9, 0, 1}) == "hi");
}

TEST_CASE("charlm train_run: the steps follow --batch-order's batches, as a loop by hand", "[charlm]") {
  WordSplit data{.words = kWords, .train = {0, 1, 2, 3, 4, 5}, .val = {6, 7}};
  RunOptions options{.model = small_model(NormKind::Layer, Position::Pre), .seed = 5, .steps = 4, .batch_size = 2};
  options.eval_every = 2;
  options.batch_order = {{5, 4, 3, 2, 1, 0}, {0, 2, 4, 1, 3, 5}};
  const RunResult run = train_run(data, options);
  REQUIRE(run.ok());

  Generator gen(5);  // the same init, the same optimizer, the file's batches
  CharTransformer model(options.model, gen);
  auto optimizer = lesson::make_optimizer(options.trainer, options.lr, model.parameters());
  const std::vector<std::vector<int64_t>> batches{{5, 4}, {3, 2}, {1, 0}, {0, 2}};
  for (size_t i = 0; i < batches.size(); ++i) {
    const Batch batch = make_batch(kWords, batches[i]);
    const Tensor loss =
        cross_entropy(model.forward(batch.x, batch.mask).reshape({-1, kVocabSize}), batch.y, {.ignore_index = -1});
    optimizer->zero_grad();
    loss.backward();
    optimizer->step();
    CHECK(run.curve[i] == loss.item());
  }
  REQUIRE(run.val_curve.size() == 2);
  CHECK(run.val_curve[1].step == 4);
  CHECK(run.val_loss == evaluate(model, kWords, {6, 7}));
  CHECK(run.train_loss == Approx((run.curve[2] + run.curve[3]) / 2));

  options.batch_order = {{0, 1, 2, 3, 4, 5}, {5, 4, 3, 2, 1, 0}};
  CHECK(train_run(data, options).curve != run.curve);
}

TEST_CASE("charlm sampling: words of a-z from a seeded stream, the same seed the same words", "[charlm]") {
  Generator init(0);
  CharTransformer model(small_model(NormKind::BatchMasked, Position::Post), init);
  Generator a(9), b(9);
  const std::vector<std::string> first = sample_words(model, 5, {.temperature = 0.8, .top_k = 5}, a);
  CHECK(first == sample_words(model, 5, {.temperature = 0.8, .top_k = 5}, b));
  for (const std::string& word : first) {
    CHECK(word.size() < 12);
    CHECK(word.find_first_not_of("abcdefghijklmnopqrstuvwxyz") == std::string::npos);
  }
  CHECK_FALSE(model.is_training());
}

namespace {

float largest_difference(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.to_vector(), y = b.to_vector();
  float largest = 0.0f;
  for (size_t i = 0; i < x.size(); ++i) largest = std::max(largest, std::abs(x[i] - y[i]));
  return largest;
}

// A LayerNorm block's forward written out from library ops and the block's own weights, in
// `position`'s order; the attention is the block's own module (its weights are checked by
// tests/test_charlm_attention.cpp).
Tensor block_by_hand(Block& block, const Tensor& x, Position position) {
  std::map<std::string, Tensor> w;
  for (const auto& [name, tensor] : block.named_parameters()) w[name] = tensor;
  std::map<std::string, std::shared_ptr<nn::Module>> children;
  for (const auto& [name, child] : block.named_children()) children[name] = child;
  auto norm = [&](const std::string& name, const Tensor& in) {
    return layer_norm(in, {in.size(-1)}, w[name + ".weight"], w[name + ".bias"]);
  };
  auto attn = [&](const Tensor& in) { return (*children["attn"])(in); };
  auto mlp = [&](const Tensor& in) {
    const Tensor hidden = gelu(linear(in, w["mlp.c_fc.weight"], w["mlp.c_fc.bias"]), "tanh");
    return linear(hidden, w["mlp.c_proj.weight"], w["mlp.c_proj.bias"]);
  };
  if (position == Position::Pre) {
    const Tensor h = x + attn(norm("ln_1", x));
    return h + mlp(norm("ln_2", h));
  }
  const Tensor h = norm("ln_1", x + attn(x));
  return norm("ln_2", h + mlp(h));
}

}  // namespace

TEST_CASE("charlm Block: pre-norm x + f(ln(x)) and post-norm ln(x + f(x)), each in its own order", "[charlm]") {
  NoGradGuard no_grad;
  for (Position position : {Position::Pre, Position::Post}) {
    INFO(short_name(position));
    Generator gen(6);
    Block block(small_model(NormKind::Layer, position), gen);
    // Both LayerNorms' affine parameters away from 1 and 0, each its own, and an input far
    // from normalized (mean 1, std 3): the two orders, and ln_1 against ln_2, then differ
    // by far more than rounding.
    for (auto& [name, tensor] : block.named_parameters()) {
      if (name.ends_with("ln_1.weight") || name.ends_with("ln_2.weight"))
        tensor.copy_(Tensor::rand(tensor.shape(), gen, 0.5f, 2.0f));
      if (name.ends_with("ln_1.bias") || name.ends_with("ln_2.bias"))
        tensor.copy_(Tensor::randn(tensor.shape(), gen, 0.0f, 0.5f));
    }
    const Tensor x = Tensor::randn({2, 5, 16}, gen, 1.0f, 3.0f);
    const Tensor out = block(x);
    check_close(out, block_by_hand(block, x, position), kAtol, kRtol);
    const Position other = position == Position::Pre ? Position::Post : Position::Pre;
    CHECK(largest_difference(out, block_by_hand(block, x, other)) > 0.1f);
  }
}

namespace {

// Sampling is checked against a model whose next-token distribution is known exactly: a
// bigram table. Width 4, every weight 0 but wte's rows 0..3 (one-hot) and lm_head's columns
// 0..3, no norm: each block's projections are 0, so it adds exactly 0, and the logits after
// token t < 4 are lm_head.weight[:, t] exactly. After the start token 0 the first letter is
// a, b or c with probabilities 0.6, 0.3, 0.1 (the end token and every other letter never);
// after a, b or c the word ends. Any other token embeds to 0: all 27 logits 0, uniform.
constexpr float kNever = -1000.0f;  // exp(kNever / T) is 0 in float32 for every T used here
const std::vector<double> kFirstLetterLogits{std::log(0.6), std::log(0.3), std::log(0.1)};  // a, b, c

void set_bigram_weights(CharTransformer& model) {
  std::map<std::string, Tensor> w;
  for (auto& [name, tensor] : model.named_parameters()) {
    tensor.zero_();
    w[name] = tensor;
  }
  for (int64_t t = 0; t < 4; ++t) w["transformer.wte.weight"].set({t, t}, 1.0f);
  Tensor& head = w["lm_head.weight"];
  for (int64_t v = 0; v < kVocabSize; ++v) {
    head.set({v, 0}, v >= 1 && v <= 3 ? float(kFirstLetterLogits[size_t(v - 1)]) : kNever);
    for (int64_t t = 1; t < 4; ++t) head.set({v, t}, v == 0 ? 0.0f : kNever);
  }
}

std::unique_ptr<CharTransformer> bigram_model() {
  Generator gen(0);
  auto model = std::make_unique<CharTransformer>(
      ModelOptions{.block_size = 3, .layers = 1, .heads = 2, .width = 4, .norm = NormKind::None}, gen);
  NoGradGuard no_grad;
  set_bigram_weights(*model);
  return model;
}

// softmax(logits / T) over the k likeliest first letters (0: all three), in double: the law
// sample_word must draw the first letter from.
std::vector<double> first_letter_law(double temperature, int64_t top_k) {
  // kFirstLetterLogits falls: its k likeliest letters are its first k.
  const size_t kept = top_k == 0 ? kFirstLetterLogits.size() : size_t(top_k);
  std::vector<double> probs(kFirstLetterLogits.size(), 0.0);
  for (size_t i = 0; i < kept; ++i) probs[i] = std::exp(kFirstLetterLogits[i] / temperature);
  const double total = std::accumulate(probs.begin(), probs.end(), 0.0);
  for (double& p : probs) p /= total;
  return probs;
}

// Draws words with `options` and holds the counts of "a", "b" and "c" to first_letter_law by
// Pearson's chi-square over the letters of positive probability. For a correct sampler it
// follows a chi-square law with (letters - 1) degrees of freedom, whatever the seed: with two
// letters P(X > 30) = erfc(sqrt(15)) = 4e-8, with three P(X > 30) = exp(-15) = 3e-7. 2000
// draws put every expected count at 43 or more, where that law holds closely. A wrong sampler
// scores N sum (q - p)^2 / p for its own law q: argmax 1333, a temperature ignored 760 at
// T = 0.5 and 165 at T = 2 (its spread sqrt(2 (2 + 2 * 165)) = 26); an ignored top-k 2 draws
// c a tenth of the time, and any other word (a wrong start token's) is counted apart.
void check_first_letters(const SampleOptions& options) {
  INFO("temperature " << options.temperature << ", top-k " << options.top_k);
  constexpr int64_t kDraws = 2000;
  const std::unique_ptr<CharTransformer> model = bigram_model();
  Generator gen(17);
  std::vector<int64_t> counts(3, 0);
  std::vector<std::string> others;
  for (int64_t i = 0; i < kDraws; ++i) {
    const std::string word = sample_word(*model, options, gen);
    if (word == "a" || word == "b" || word == "c") ++counts[size_t(word[0] - 'a')];
    else others.push_back(word);
  }
  INFO("a " << counts[0] << ", b " << counts[1] << ", c " << counts[2] << ", other words " << others.size()
            << (others.empty() ? "" : " (\"" + others[0] + "\" first)"));
  CHECK(others.empty());
  const std::vector<double> law = first_letter_law(options.temperature, options.top_k);
  for (size_t i = 0; i < law.size(); ++i)
    if (law[i] == 0.0) CHECK(counts[i] == 0);
  CHECK(chi_square(counts, law, kDraws) < 30.0);
}

}  // namespace

TEST_CASE("charlm sampling: the bigram model's logits are its table, exactly", "[charlm]") {
  NoGradGuard no_grad;
  const std::unique_ptr<CharTransformer> model = bigram_model();
  KVCache cache;
  const std::vector<float> after_start = model->step(Tensor::full({1, 1}, 0.0f), 0, cache).to_vector();
  CHECK(after_start[1] == float(kFirstLetterLogits[0]));
  CHECK(after_start[3] == float(kFirstLetterLogits[2]));
  CHECK(after_start[0] == kNever);
  const std::vector<float> after_b = model->step(Tensor::full({1, 1}, 2.0f), 1, cache).to_vector();
  CHECK(after_b[0] == 0.0f);
  CHECK(after_b[2] == kNever);
}

TEST_CASE("charlm sampling: the first letter is drawn from the start token's softmax, not its argmax", "[charlm]") {
  check_first_letters({.temperature = 1.0, .top_k = 0});
}

TEST_CASE("charlm sampling: --temperature divides the logits (sharper below 1, flatter above)", "[charlm]") {
  check_first_letters({.temperature = 0.5, .top_k = 0});
  check_first_letters({.temperature = 2.0, .top_k = 0});
}

TEST_CASE("charlm sampling: --top-k 2 draws among the two likeliest letters only", "[charlm]") {
  check_first_letters({.temperature = 1.0, .top_k = 2});
  check_first_letters({.temperature = 2.0, .top_k = 2});
}

}  // namespace test_charlm_model
