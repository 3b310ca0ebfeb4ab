// charlm's --attention weights (apps/charlm/attention_dump.hpp): causal, rows summing to
// 1, equal to softmax(q k^T / sqrt(D)) written out by hand from each block's c_attn and the
// input its attention received, and the CSV that holds them.
#include <catch2/catch.hpp>
#include <cmath>

#include "attention_dump.hpp"
#include "models/charlm_model.hpp"

namespace test_charlm_attention {

using namespace minidl;
using namespace minidl::charlm;

namespace {

constexpr int64_t kHeads = 2;

ModelOptions small_model(NormKind norm, Position position) {
  return {.block_size = 12, .layers = 2, .heads = kHeads, .width = 16, .norm = norm, .position = position};
}

std::vector<CausalSelfAttention*> attention_modules(nn::Module& module) {
  std::vector<CausalSelfAttention*> found;
  if (auto* attention = dynamic_cast<CausalSelfAttention*>(&module)) found.push_back(attention);
  for (const auto& child : module.named_children())
    for (CausalSelfAttention* inner : attention_modules(*child.second)) found.push_back(inner);
  return found;
}

// softmax(q k^T / sqrt(D)) over keys 0..i of each query i, in double by plain loops from the
// attention's input x (1, T, C) and its c_attn (3C, C): (H, T, T) flat, 0 above the diagonal.
std::vector<double> reference_weights(const CausalSelfAttention& attention, const Tensor& x) {
  const int64_t t = x.size(1), c = x.size(2), d = c / kHeads;
  const float* w = attention.c_attn->weight.data();
  const float* b = attention.c_attn->bias.data();
  std::vector<double> qkv(size_t(t * 3 * c));  // (T, 3C): q, k, v
  for (int64_t i = 0; i < t; ++i)
    for (int64_t o = 0; o < 3 * c; ++o) {
      double sum = b[o];
      for (int64_t j = 0; j < c; ++j) sum += double(x.data()[i * c + j]) * w[o * c + j];
      qkv[size_t(i * 3 * c + o)] = sum;
    }
  std::vector<double> weights(size_t(kHeads * t * t), 0.0);
  for (int64_t h = 0; h < kHeads; ++h)
    for (int64_t i = 0; i < t; ++i) {
      double* row = &weights[size_t((h * t + i) * t)];
      double total = 0.0;
      for (int64_t j = 0; j <= i; ++j) {
        double score = 0.0;
        for (int64_t e = 0; e < d; ++e)
          score += qkv[size_t(i * 3 * c + h * d + e)] * qkv[size_t(j * 3 * c + c + h * d + e)];
        row[j] = std::exp(score / std::sqrt(double(d)));
        total += row[j];
      }
      for (int64_t j = 0; j <= i; ++j) row[j] /= total;
    }
  return weights;
}

}  // namespace

TEST_CASE("charlm attention weights: causal, rows summing to 1, softmax(q k^T / sqrt(D)) of c_attn", "[charlm]") {
  for (NormKind norm : {NormKind::Layer, NormKind::Batch, NormKind::None})
    for (Position position : {Position::Pre, Position::Post}) {
      INFO(short_name(norm) << "-" << short_name(position));
      Generator gen(3);
      CharTransformer model(small_model(norm, position), gen);
      model.train();
      // Each attention's input, caught by a hook that only looks.
      std::vector<CausalSelfAttention*> attentions = attention_modules(model);
      REQUIRE(attentions.size() == 2);
      std::vector<Tensor> inputs(attentions.size());
      std::vector<RemovableHandle> hooks;
      for (size_t i = 0; i < attentions.size(); ++i)
        hooks.push_back(attentions[i]->register_forward_pre_hook(
            [&inputs, i](nn::Module&, const Tensor& x) { inputs[i] = x.detach().clone(); }));

      const std::vector<Tensor> weights = attention_weights(model, "hello");
      for (RemovableHandle& hook : hooks) hook.remove();
      CHECK(model.is_training());  // the mode comes back
      for (CausalSelfAttention* attention : attentions) CHECK(attention->weights_out == nullptr);
      REQUIRE(weights.size() == 2);
      for (size_t layer = 0; layer < weights.size(); ++layer) {
        REQUIRE(weights[layer].shape() == Shape{kHeads, 6, 6});
        const std::vector<double> expected = reference_weights(*attentions[layer], inputs[layer]);
        const float* actual = weights[layer].data();
        for (int64_t h = 0; h < kHeads; ++h)
          for (int64_t i = 0; i < 6; ++i) {
            double row_sum = 0.0;
            for (int64_t j = 0; j < 6; ++j) {
              const size_t at = size_t((h * 6 + i) * 6 + j);
              INFO("layer " << layer << " head " << h << " query " << i << " key " << j);
              if (j > i) CHECK(actual[at] == 0.0f);  // exactly: exp(-inf)
              // The scores are sums of D products of q and k, themselves sums of C = 16
              // products: float32 rounds each within (C + D) u of the sums of |terms| (below
              // 10 here, so 1e-5), and softmax passes a score's error to the weights at most
              // once over. 1e-4 holds that in any summation order and is far below a wrong
              // mask, head or scale (0.05 and up).
              CHECK(std::abs(actual[at] - expected[at]) <= 1e-4);
              row_sum += actual[at];
            }
            // T + 2 roundings of at most u each (division, then the sum).
            CHECK(std::abs(row_sum - 1.0) <= 1e-5);
          }
      }
    }
}

TEST_CASE("charlm attention_csv: a row per finished run, layer, head, query and key, tokens as letters", "[charlm]") {
  Generator gen(0);
  std::vector<RunResult> results(2);
  results[0].model = std::make_shared<CharTransformer>(small_model(NormKind::Layer, Position::Pre), gen);
  results[0].seed = 7;
  results[1].failure = "diverged";  // no model: left out
  const std::string csv = attention_csv(results, "ab");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 2 * kHeads * 3 * 3);
  CHECK(csv.rfind("run,seed,layer,head,query,key,query_token,key_token,weight\nlayer-pre,7,0,0,0,0,.,.,1\n"
                  "layer-pre,7,0,0,0,1,.,a,0\n",
                  0) == 0);
  CHECK(csv.find("\nlayer-pre,7,1,1,2,1,b,a,") != std::string::npos);
}

TEST_CASE("charlm parse_attention: WORD,FILE split at the first comma, bad words refused", "[charlm]") {
  const AttentionRequest request = parse_attention("hello,out,with,commas.csv", 32);
  CHECK(request.word == "hello");
  CHECK(request.file == "out,with,commas.csv");
  CHECK(parse_attention("abcde,a.csv", 6).word == "abcde");  // 5 letters + the start token fit 6 positions
  CHECK_THROWS_WITH(parse_attention("abcdef,a.csv", 6),
                    "--attention: the word \"abcdef\" has 6 letters, more than the 5 --block-size 6 allows: choose a "
                    "shorter word");
}

}  // namespace test_charlm_attention
