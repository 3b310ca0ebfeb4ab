// cat, stack, split, chunk, narrow, slice, permute, and matmul on attention's shapes: values,
// errors, PyTorch's fixtures (scripts/fixtures/sequence.py) and finite differences. These ops
// only copy, so values and gradients match the fixtures exactly.
#include "support/check.hpp"
#include "support/fixture_calls.hpp"

namespace test_ops_join {

using namespace minidl;
using Catch::Contains;
using minidl::testing::check_close;
using minidl::testing::check_gradients;
using minidl::testing::check_multi_call;
using minidl::testing::check_single_call;
using minidl::testing::Fixture;
using minidl::testing::fixtures_of;
using minidl::testing::kLinearStep;
using Inputs = const std::vector<Tensor>&;

TEST_CASE("cat and stack join tensors along a dim", "[ops][seqops]") {
  Tensor a = Tensor::from_vector({1, 2, 3, 4}, {2, 2}), b = Tensor::from_vector({5, 6}, {2, 1});
  Tensor ab = cat({a, b}, 1);  // an int dim: the tensor overload, not the message builder
  CHECK(ab.shape() == Shape{2, 3});
  check_close(ab, {1, 2, 5, 3, 4, 6}, 0, 0);
  const std::vector<Tensor> rows = {a, Tensor::from_vector({7, 8}, {1, 2})};
  check_close(cat(rows), {1, 2, 3, 4, 7, 8}, 0, 0);
  check_close(cat(rows, -2), {1, 2, 3, 4, 7, 8}, 0, 0);
  CHECK(cat({a, Tensor::zeros({2, 0})}, 1).shape() == Shape{2, 2});
  Tensor s = stack({a, a * 10.0f}, 1);  // (2, 2, 2): s[i, k, j] = tensor k's [i, j]
  CHECK(s.shape() == Shape{2, 2, 2});
  check_close(s, {1, 2, 10, 20, 3, 4, 30, 40}, 0, 0);
  CHECK(stack({a, a}, -1).shape() == Shape{2, 2, 2});
  CHECK(stack({Tensor::scalar(1.0f), Tensor::scalar(2.0f)}).shape() == Shape{2});
}

TEST_CASE("cat and stack name the shapes that do not fit", "[ops][seqops]") {
  Tensor a = Tensor::zeros({2, 3});
  REQUIRE_THROWS_WITH(cat({}, 0), Contains("cat: expected a non-empty list of tensors, got an empty one"));
  REQUIRE_THROWS_WITH(cat({a, Tensor::zeros({3, 3})}, 1),
                      Contains("cat: expected tensors of one rank with the same sizes except in dim 1, got shape "
                               "[2, 3] at position 0 and [3, 3] at position 1"));
  REQUIRE_THROWS_WITH(cat({a, a, Tensor::zeros({2, 3, 1})}, 0),
                      Contains("got shape [2, 3] at position 0 and [2, 3, 1] at position 2"));
  REQUIRE_THROWS_WITH(cat({a, Tensor::scalar(1.0f)}, 0),
                      Contains("cat: a zero-dimensional tensor (at position 1) cannot be concatenated"));
  REQUIRE_THROWS_WITH(cat({a, a}, 2), Contains("expected to be in range of [-2, 1], but got 2"));
  REQUIRE_THROWS_WITH(
      stack({a, Tensor::zeros({3, 2})}, 0),
      Contains("stack: expected tensors of one shape, got [2, 3] at position 0 and [3, 2] at position 1"));
  REQUIRE_THROWS_WITH(stack({}, 0), Contains("stack: expected a non-empty list of tensors"));
  REQUIRE_THROWS_WITH(stack({a}, 3), Contains("expected to be in range of [-3, 2], but got 3"));
}

TEST_CASE("split and chunk take a tensor apart as torch does", "[ops][seqops]") {
  Tensor x = Tensor::arange(7);
  std::vector<Tensor> pieces = split(x, 3);
  REQUIRE(pieces.size() == 3);
  check_close(pieces[2], {6}, 0, 0);
  pieces = split(x, std::vector<int64_t>{1, 0, 6});
  REQUIRE(pieces.size() == 3);
  CHECK(pieces[1].shape() == Shape{0});
  check_close(pieces[2], {1, 2, 3, 4, 5, 6}, 0, 0);
  CHECK(split(x, 10).size() == 1);
  // chunk: ceil(6 / 4) = 2 per piece, so 3 pieces; a dim of size 0 gives `chunks` empty ones.
  CHECK(chunk(Tensor::arange(6), 4).size() == 3);
  CHECK(chunk(Tensor::zeros({2, 0}), 3, 1).size() == 3);
  CHECK(split(Tensor::zeros({0}), 0).size() == 1);
  std::vector<Tensor> qkv = chunk(Tensor::arange(12).reshape({2, 6}), 3, -1);
  check_close(qkv[1], {2, 3, 8, 9}, 0, 0);
}

TEST_CASE("split and chunk refuse sizes that do not fit", "[ops][seqops]") {
  Tensor x = Tensor::zeros({2, 5});
  REQUIRE_THROWS_WITH(split(x, std::vector<int64_t>{2, 2}, 1),
                      Contains("split: expected split sizes >= 0 that add up to 5 (the size of dim 1 of shape [2, 5]), "
                               "got [2, 2]"));
  REQUIRE_THROWS_WITH(split(x, std::vector<int64_t>{6, -1}, 1), Contains("got [6, -1]"));
  REQUIRE_THROWS_WITH(split(x, 0, 1), Contains("split: expected a split_size > 0 (0 only for a dim of size 0), got 0 "
                                               "for dim 1 of shape [2, 5]"));
  REQUIRE_THROWS_WITH(split(Tensor::scalar(1.0f), 1), Contains("split: expected a tensor with at least one dim"));
  REQUIRE_THROWS_WITH(chunk(x, 0), Contains("chunk: expected chunks > 0, got 0 (shape [2, 5])"));
  REQUIRE_THROWS_WITH(chunk(Tensor::scalar(1.0f), 2), Contains("chunk: expected a tensor with at least one dim"));
}

TEST_CASE("narrow and slice take ranges of a dim as torch and Python do", "[ops][seqops]") {
  Tensor x = Tensor::arange(12).reshape({3, 4});
  check_close(narrow(x, 1, 1, 2), {1, 2, 5, 6, 9, 10}, 0, 0);
  check_close(narrow(x, 0, -1, 1), {8, 9, 10, 11}, 0, 0);  // the last row
  check_close(slice(x, 1, 0, 4, 2), {0, 2, 4, 6, 8, 10}, 0, 0);
  check_close(slice(x, -1, -2), {2, 3, 6, 7, 10, 11}, 0, 0);  // x[:, -2:]
  check_close(slice(x, 0, 1, 100), {4, 5, 6, 7, 8, 9, 10, 11}, 0, 0);
  CHECK(slice(x, 0, 2, 1).shape() == Shape{0, 4});  // an empty range, as x[2:1]
  CHECK(slice(x, 1, -100, 2).shape() == Shape{3, 2});
  CHECK(slice(x, 1, 1, 4, 5).shape() == Shape{3, 1});
  CHECK(narrow(x, 1, 4, 0).shape() == Shape{3, 0});
}

TEST_CASE("narrow and slice refuse ranges outside the dim", "[ops][seqops]") {
  Tensor x = Tensor::zeros({2, 6});
  REQUIRE_THROWS_WITH(narrow(x, 1, 5, 2),
                      Contains("narrow: start (5) + length (2) exceeds dimension size (6) of dim 1 of shape [2, 6]"));
  REQUIRE_THROWS_WITH(narrow(x, 1, 7, 0), Contains("narrow: start out of range (expected to be in range of [-6, 6], "
                                                   "but got 7) for dim 1 of shape [2, 6]"));
  REQUIRE_THROWS_WITH(narrow(x, 0, 0, -1), Contains("narrow: length must be non-negative, got -1"));
  REQUIRE_THROWS_WITH(narrow(Tensor::scalar(1.0f), 0, 0, 1), Contains("narrow: cannot be applied to a 0-dim tensor"));
  REQUIRE_THROWS_WITH(slice(x, 1, 0, 6, 0), Contains("slice: step must be positive, got 0"));
  REQUIRE_THROWS_WITH(slice(Tensor::scalar(1.0f), 0), Contains("slice: cannot be applied to a 0-dim tensor"));
  REQUIRE_THROWS_WITH(slice(x, 2), Contains("expected to be in range of [-2, 1], but got 2"));
}

TEST_CASE("permute reorders dims, and its errors name the dims and the shape", "[ops][seqops]") {
  Tensor x = Tensor::arange(24).reshape({2, 3, 4});
  Tensor p = permute(x, {2, 0, 1});
  CHECK(p.shape() == Shape{4, 2, 3});
  CHECK(p.at({3, 1, 2}) == x.at({1, 2, 3}));
  CHECK(permute(x, {0, -1, 1}).to_vector() == transpose(x, 1, 2).to_vector());
  CHECK(permute(Tensor::scalar(3.0f), {}).item() == 3.0f);
  REQUIRE_THROWS_WITH(permute(x, {1, 0}),
                      Contains("permute: expected one dim per dim of the input, got dims [1, 0] for shape [2, 3, 4]"));
  REQUIRE_THROWS_WITH(permute(x, {0, 2, -1}), Contains("permute: dims [0, 2, -1] name dim 2 twice (shape [2, 3, 4])"));
  REQUIRE_THROWS_WITH(permute(x, {0, 1, 3}), Contains("expected to be in range of [-3, 2], but got 3"));
}

TEST_CASE("fixtures: cat, stack, split and chunk match PyTorch exactly", "[fixtures][seqops]") {
  for (const char* op : {"cat", "stack"})
    for (const Fixture& fx : fixtures_of(op)) {
      const int64_t dim = fx.options().at("dim");
      const bool is_cat = std::string(op) == "cat";
      check_multi_call(
          fx, [&](Inputs in) { return std::vector<Tensor>{is_cat ? cat(in, dim) : stack(in, dim)}; }, 0, 0);
    }
  for (const Fixture& fx : fixtures_of("split")) {
    const int64_t dim = fx.options().at("dim");
    const nlohmann::json& size = fx.options().at("split_size_or_sections");
    check_multi_call(
        fx,
        [&](Inputs in) {
          return size.is_array() ? split(in[0], size.get<std::vector<int64_t>>(), dim)
                                 : split(in[0], size.get<int64_t>(), dim);
        },
        0, 0);
  }
  for (const Fixture& fx : fixtures_of("chunk")) {
    const int64_t chunks = fx.options().at("chunks"), dim = fx.options().at("dim");
    check_multi_call(
        fx, [&](Inputs in) { return chunk(in[0], chunks, dim); }, 0, 0);
  }
  CHECK(fixtures_of("cat").size() == 4);
  CHECK(fixtures_of("stack").size() == 3);
  CHECK(fixtures_of("split").size() == 3);
  CHECK(fixtures_of("chunk").size() == 3);
}

TEST_CASE("fixtures: narrow, slice and permute match PyTorch exactly", "[fixtures][seqops]") {
  for (const Fixture& fx : fixtures_of("narrow")) {
    const nlohmann::json& o = fx.options();
    check_single_call(
        fx, [&](const Tensor& x) { return narrow(x, o.at("dim"), o.at("start"), o.at("length")); }, 0, 0);
  }
  for (const Fixture& fx : fixtures_of("slice")) {
    const nlohmann::json& o = fx.options();
    check_single_call(
        fx, [&](const Tensor& x) { return slice(x, o.at("dim"), o.at("start"), o.at("end"), o.at("step")); }, 0, 0);
  }
  for (const Fixture& fx : fixtures_of("permute")) {
    const auto dims = fx.options().at("dims").get<std::vector<int64_t>>();
    check_single_call(
        fx, [&](const Tensor& x) { return permute(x, dims); }, 0, 0);
  }
  CHECK(fixtures_of("narrow").size() == 3);
  CHECK(fixtures_of("slice").size() == 3);
  CHECK(fixtures_of("permute").size() == 4);
}

TEST_CASE("fixtures: matmul broadcasts attention's (B, H, T, D) batches as torch.matmul", "[fixtures][seqops]") {
  // q k^T, the weights @ v, and a key/value cache's single query: one sgemm per (b, h); K is
  // at most 5, so float32 sums in any order stay within the fixtures' 1e-5 + 1e-4 relative.
  const auto fixtures = fixtures_of("matmul_attention");
  CHECK(fixtures.size() == 3);
  for (const Fixture& fx : fixtures)
    check_multi_call(fx, [](Inputs in) { return std::vector<Tensor>{matmul(in[0], in[1])}; });
}

TEST_CASE("gradients of cat, stack, split, chunk, narrow, slice and permute by finite differences",
          "[ops][autograd][seqops]") {
  Generator gen(39);
  const auto r = [&](const Shape& shape) { return Tensor::randn(shape, gen); };
  check_gradients([](Inputs in) { return cat(in, 1); }, {r({2, 3}), r({2, 1}), r({2, 2})}, kLinearStep);
  check_gradients([](Inputs in) { return stack(in, 1); }, {r({2, 3}), r({2, 3})}, kLinearStep);
  // The pieces of a split, weighted differently, summed: every piece's backward reaches x.
  check_gradients(
      [](Inputs in) {
        std::vector<Tensor> pieces = split(in[0], std::vector<int64_t>{1, 3}, -1);
        return sum(pieces[0] * 2.0f) + sum(pieces[1] * pieces[1]);
      },
      {r({2, 4})});
  check_gradients([](Inputs in) { return cat(chunk(in[0], 3, 0), 1); }, {r({6, 2})}, kLinearStep);
  check_gradients([](Inputs in) { return narrow(in[0], 1, 1, 2); }, {r({2, 4, 3})}, kLinearStep);
  check_gradients([](Inputs in) { return slice(in[0], 0, 1, 6, 2); }, {r({6, 2})}, kLinearStep);
  check_gradients([](Inputs in) { return permute(in[0], {3, 1, 0, 2}); }, {r({2, 3, 2, 4})}, kLinearStep);
}

}  // namespace test_ops_join
