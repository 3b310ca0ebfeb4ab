// embedding (the functional form) and nn::Embedding: values, the weight's gradient
// (repeated indices, padding_idx), PyTorch's fixtures (scripts/fixtures/sequence.py), finite
// differences, the module's init and state, and every error.
#include "support/check.hpp"
#include "support/fixture_calls.hpp"

namespace test_embedding {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;
using minidl::testing::check_gradients;

namespace {

// weight (4, 2): row r is [10 r, 10 r + 1], so an output row names the row it came from.
Tensor numbered_weight() { return Tensor::from_vector({0, 1, 10, 11, 20, 21, 30, 31}, {4, 2}); }

// A fixture's padding_idx option: JSON null is none.
std::optional<int64_t> padding_of(const minidl::testing::Fixture& fx) {
  const nlohmann::json& option = fx.options().at("padding_idx");
  return option.is_null() ? std::nullopt : std::optional<int64_t>(option.get<int64_t>());
}

}  // namespace

TEST_CASE("embedding gives the rows its indices name, in the indices' shape plus D", "[embedding]") {
  Tensor weight = numbered_weight();
  check_close(embedding(Tensor::from_vector({3, 0, 3}), weight), {30, 31, 0, 1, 30, 31}, 0, 0);
  Tensor batch = embedding(Tensor::from_vector({1, 2, 2, 0}, {2, 2}), weight);
  CHECK(batch.shape() == Shape{2, 2, 2});
  check_close(batch, {10, 11, 20, 21, 20, 21, 0, 1}, 0, 0);
  Tensor one = embedding(Tensor::scalar(2.0f), weight);  // a 0-d index gives one row, (D)
  CHECK(one.shape() == Shape{2});
  check_close(one, {20, 21}, 0, 0);
  CHECK(embedding(Tensor::zeros({2, 0}), weight).shape() == Shape{2, 0, 2});
  // The forward still reads the padding row: only its gradient is held at zero.
  check_close(embedding(Tensor::from_vector({1}), weight, 1), {10, 11}, 0, 0);
}

TEST_CASE("embedding's weight gradient sums repeated rows and leaves the padding row at zero", "[embedding]") {
  Tensor weight = numbered_weight().requires_grad_();
  Tensor indices = Tensor::from_vector({3, 0, 3, 1, 3}, {5});
  Tensor grad = Tensor::from_vector({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {5, 2});
  embedding(indices, weight).backward(grad);
  check_close(weight.grad(), {3, 4, 7, 8, 0, 0, 15, 18}, 0, 0);  // row 3: (1, 2) + (5, 6) + (9, 10)
  CHECK(!indices.requires_grad());

  for (const int64_t padding : {3, -1}) {  // -1 counts from V = 4: row 3 again
    INFO("padding_idx " << padding);
    weight.zero_grad();
    embedding(indices, weight, padding).backward(grad);
    check_close(weight.grad(), {3, 4, 7, 8, 0, 0, 0, 0}, 0, 0);
  }
}

TEST_CASE("embedding gathers rows of any differentiable tensor, not only a leaf", "[embedding]") {
  // Rows of an activation h = 3 x: the gradient flows through the gather into x.
  Tensor x = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {3, 2}).requires_grad_();
  Tensor rows = embedding(Tensor::from_vector({2, 2, 0}), x * 3.0f);
  check_close(rows, {15, 18, 15, 18, 3, 6}, 0, 0);
  rows.sum().backward();
  check_close(x.grad(), {3, 3, 0, 0, 6, 6}, 0, 0);
  // A write into the indices after the forward does not move the gradient: the op kept its rows.
  Tensor w = numbered_weight().requires_grad_();
  Tensor indices = Tensor::from_vector({1});
  Tensor out = embedding(indices, w);
  indices.detach().fill_(2.0f);
  out.sum().backward();
  check_close(w.grad(), {0, 0, 1, 1, 0, 0, 0, 0}, 0, 0);
}

TEST_CASE("fixtures: embedding matches PyTorch's output and weight gradient", "[embedding][fixtures]") {
  const auto fixtures = minidl::testing::fixtures_of("embedding");
  CHECK(fixtures.size() == 4);
  for (const minidl::testing::Fixture& fx : fixtures) {
    const Tensor indices = fx["indices"];
    const std::optional<int64_t> padding = padding_of(fx);
    // The fixture's `input` is the weight: its gradient is input.grad.
    minidl::testing::check_single_call(fx, [&](const Tensor& w) { return embedding(indices, w, padding); });
  }
}

TEST_CASE("embedding's weight gradient agrees with finite differences", "[embedding]") {
  Generator gen(35);
  Tensor weight = Tensor::randn({5, 3}, gen);
  Tensor indices = Tensor::from_vector({4, 1, 4, 0, 2, 4}, {2, 3});
  check_gradients([&](const std::vector<Tensor>& in) { return embedding(indices, in[0]); }, {weight},
                  minidl::testing::kLinearStep);
  // Rows of an activation, through 3-D indices: the gradient reaches tanh's input.
  Tensor cube = Tensor::from_vector({0, 3, 3, 1, 4, 0, 3, 2}, {2, 2, 2});
  check_gradients([&](const std::vector<Tensor>& in) { return embedding(cube, tanh(in[0])); }, {weight},
                  minidl::testing::kSmoothStep);
  // No check with padding_idx: its row's gradient is zero by definition, not the derivative
  // of the forward, which reads that row (the hand-written test above holds it).
}

TEST_CASE("embedding's errors name the index, its position, the shapes and V", "[embedding]") {
  Tensor weight = Tensor::zeros({5, 2});
  REQUIRE_THROWS_WITH(embedding(Tensor::from_vector({1, 5}), weight),
                      "embedding: index 5 at position 1 of indices of shape [2] is out of range (expected an "
                      "integer in [0, 5) for weight of shape [5, 2])");
  REQUIRE_THROWS_WITH(embedding(Tensor::from_vector({0, 1, 2, -1}, {2, 2}), weight),
                      Contains("index -1 at position 3 of indices of shape [2, 2] is out of range"));
  REQUIRE_THROWS_WITH(embedding(Tensor::from_vector({2.5f}), weight),
                      "embedding: index 2.5 at position 0 of indices of shape [1] is not an integer (expected an "
                      "integer in [0, 5) for weight of shape [5, 2])");
  REQUIRE_THROWS_WITH(embedding(Tensor::from_vector({NAN}), weight), Contains("index nan at position 0"));
  REQUIRE_THROWS_WITH(embedding(Tensor::from_vector({1}), Tensor::zeros({5})),
                      "embedding: expected weight of shape [num_embeddings, embedding_dim], got [5]");
  REQUIRE_THROWS_WITH(embedding(Tensor::from_vector({1}), weight, 5),
                      "embedding: padding_idx must be within num_embeddings: expected -5 <= padding_idx < 5 for "
                      "weight of shape [5, 2], got 5");
  REQUIRE_THROWS_WITH(embedding(Tensor::from_vector({1}), weight, -6), Contains("got -6"));
}

TEST_CASE("Embedding's weight is drawn N(0, 1) from the generator, the padding row then zeroed", "[embedding][nn]") {
  Generator gen(7), replay(7);
  nn::Embedding table(nn::EmbeddingOptions(6, 4).padding_idx(-2), gen);
  CHECK(table.padding_idx() == 4);                  // stored from the front, as PyTorch stores it
  Tensor expected = Tensor::randn({6, 4}, replay);  // the same draws, row-major
  for (int64_t j = 0; j < 4; ++j) expected.set({4, j}, 0.0f);
  check_close(table.weight, expected, 0, 0);

  Generator a(8), b(8);
  nn::Embedding plain(6, 4, a);
  check_close(plain.weight, Tensor::randn({6, 4}, b), 0, 0);
  // reset_parameters redraws in place, into the same tensor, and zeroes the padding row again.
  const float* storage = table.weight.data();
  Generator again(7);
  table.reset_parameters(again);
  CHECK(table.weight.data() == storage);
  check_close(table.weight, expected, 0, 0);
}

TEST_CASE("Embedding's state, repr and forward are nn.Embedding's", "[embedding][nn]") {
  nn::Embedding table(27, 64);
  CHECK(table.repr() == "Embedding(27, 64)");
  CHECK(nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(-1)).repr() == "Embedding(10, 3, padding_idx=9)");
  CHECK(nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(0)).repr() == "Embedding(10, 3, padding_idx=0)");
  const nn::StateDict state = table.state_dict();
  REQUIRE(state.size() == 1);
  CHECK(state[0].name == "weight");
  CHECK(state[0].value.shape() == Shape{27, 64});
  CHECK(table.weight.requires_grad());
  CHECK(table.num_embeddings() == 27);
  CHECK(table.embedding_dim() == 64);
  CHECK(!table.padding_idx());

  // The module is the functional form on its weight with its padding row.
  nn::Embedding padded(nn::EmbeddingOptions(4, 2).padding_idx(1));
  Tensor indices = Tensor::from_vector({1, 3, 1}, {1, 3});
  Tensor out = padded(indices);
  check_close(out, embedding(indices, padded.weight.detach()), 0, 0);
  out.sum().backward();
  check_close(padded.weight.grad(), {0, 0, 0, 0, 0, 0, 1, 1}, 0, 0);
}

TEST_CASE("Embedding's constructor errors name the option and its value", "[embedding][nn]") {
  REQUIRE_THROWS_WITH(nn::Embedding(nn::EmbeddingOptions(5, 2).padding_idx(5)),
                      "Embedding: padding_idx must be within num_embeddings: expected -5 <= padding_idx < 5, got 5");
  REQUIRE_THROWS_WITH(nn::Embedding(nn::EmbeddingOptions(5, 2).padding_idx(-6)), Contains("got -6"));
  REQUIRE_THROWS_WITH(nn::Embedding(-1, 2),
                      "Embedding: expected non-negative num_embeddings and embedding_dim, got "
                      "num_embeddings=-1, embedding_dim=2");
  REQUIRE_THROWS_WITH(nn::Embedding(3, -4), Contains("embedding_dim=-4"));
}

}  // namespace test_embedding
