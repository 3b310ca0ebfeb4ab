// TensorDataset and DataLoader: batch sizes, the short last batch, drop_last, shuffling.
#include <algorithm>
#include <limits>
#include <numeric>
#include <set>

#include "minidl/data/data_loader.hpp"
#include "support/check.hpp"

namespace test_data_loader {

using namespace minidl;
using data::Batch;
using data::DataLoader;
using data::TensorDataset;

namespace {

// Example i has inputs [i, 100 + i] and target i, so a batch shows which rows it holds.
TensorDataset numbered(int64_t n) {
  std::vector<float> x, y;
  for (int64_t i = 0; i < n; ++i) {
    x.push_back(float(i));
    x.push_back(float(100 + i));
    y.push_back(float(i));
  }
  return TensorDataset(Tensor::from_vector(x, {n, 2}), Tensor::from_vector(y, {n}));
}

// The example indices of one epoch, batch by batch, checking inputs and targets agree.
std::vector<std::vector<int64_t>> epoch_rows(DataLoader& loader) {
  std::vector<std::vector<int64_t>> batches;
  for (const Batch& batch : loader) {
    REQUIRE(batch.inputs.size(0) == batch.targets.size(0));
    std::vector<int64_t> rows;
    for (int64_t r = 0; r < batch.targets.size(0); ++r) {
      auto i = int64_t(batch.targets.at({r}));
      CHECK(batch.inputs.at({r, 0}) == float(i));
      CHECK(batch.inputs.at({r, 1}) == float(100 + i));
      rows.push_back(i);
    }
    batches.push_back(rows);
  }
  return batches;
}

std::vector<int64_t> flatten(const std::vector<std::vector<int64_t>>& batches) {
  std::vector<int64_t> out;
  for (const auto& b : batches) out.insert(out.end(), b.begin(), b.end());
  return out;
}

std::vector<size_t> sizes(const std::vector<std::vector<int64_t>>& batches) {
  std::vector<size_t> out;
  for (const auto& b : batches) out.push_back(b.size());
  return out;
}

}  // namespace

TEST_CASE("TensorDataset refuses tensors whose first dimensions differ", "[data]") {
  REQUIRE_THROWS_WITH(TensorDataset(Tensor::zeros({5, 3}), Tensor::zeros({4})),
                      Catch::Contains("[5, 3]") && Catch::Contains("[4]"));
  TensorDataset ok(Tensor::zeros({5, 3}), Tensor::zeros({5}));
  CHECK(ok.size() == 5);
}

TEST_CASE("DataLoader keeps the short last batch unless drop_last", "[data]") {
  DataLoader keep(numbered(10), {.batch_size = 4});
  CHECK(keep.size() == 3);
  auto batches = epoch_rows(keep);
  CHECK(sizes(batches) == std::vector<size_t>{4, 4, 2});
  std::vector<int64_t> in_order(10);
  std::iota(in_order.begin(), in_order.end(), int64_t(0));
  CHECK(flatten(batches) == in_order);  // no shuffle: dataset order

  DataLoader drop(numbered(10), {.batch_size = 4, .drop_last = true});
  CHECK(drop.size() == 2);
  CHECK(sizes(epoch_rows(drop)) == std::vector<size_t>{4, 4});

  DataLoader exact(numbered(8), {.batch_size = 4, .drop_last = true});
  CHECK(sizes(epoch_rows(exact)) == std::vector<size_t>{4, 4});
  DataLoader one(numbered(3));  // batch_size 1 by default, like PyTorch
  CHECK(sizes(epoch_rows(one)) == std::vector<size_t>{1, 1, 1});
}

TEST_CASE("DataLoader takes a batch size beyond the dataset as one batch of all, whatever its size", "[data]") {
  for (int64_t b : {int64_t(11), int64_t(1) << 40, std::numeric_limits<int64_t>::max()}) {
    INFO("batch_size " << b);
    DataLoader keep(numbered(10), {.batch_size = b});
    CHECK(keep.size() == 1);
    CHECK(sizes(epoch_rows(keep)) == std::vector<size_t>{10});
    DataLoader drop(numbered(10), {.batch_size = b, .drop_last = true});
    CHECK(drop.size() == 0);
    CHECK(epoch_rows(drop).empty());
  }
  DataLoader near(numbered(10), {.batch_size = std::numeric_limits<int64_t>::max() - 3});
  CHECK(sizes(epoch_rows(near)) == std::vector<size_t>{10});
}

TEST_CASE("DataLoader batches the lesson's training split as 22 x 64 + 29", "[data]") {
  DataLoader loader(numbered(1437), {.batch_size = 64, .shuffle = true});
  auto batch_sizes = sizes(epoch_rows(loader));
  REQUIRE(batch_sizes.size() == 23);
  CHECK(std::count(batch_sizes.begin(), batch_sizes.end(), size_t(64)) == 22);
  CHECK(batch_sizes.back() == 29);
}

TEST_CASE("DataLoader draws a new permutation every epoch, the same ones for the same seed", "[data]") {
  DataLoader a(numbered(50), {.batch_size = 8, .shuffle = true, .seed = 3});
  DataLoader b(numbered(50), {.batch_size = 8, .shuffle = true, .seed = 3});
  DataLoader c(numbered(50), {.batch_size = 8, .shuffle = true, .seed = 4});
  std::vector<int64_t> identity(50);
  std::iota(identity.begin(), identity.end(), int64_t(0));
  std::set<std::vector<int64_t>> seen;
  for (int epoch = 0; epoch < 4; ++epoch) {
    auto order_a = flatten(epoch_rows(a));
    auto sorted = order_a;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == identity);                 // every example exactly once
    CHECK(seen.insert(order_a).second);        // a new order each epoch
    CHECK(order_a == flatten(epoch_rows(b)));  // same seed, same order
    CHECK(order_a != flatten(epoch_rows(c)));  // another seed, another order
  }
  CHECK(!seen.count(identity));
}

TEST_CASE("DataLoader shuffles by Fisher-Yates over Generator::below (the same on every machine)", "[data]") {
  DataLoader loader(numbered(20), {.batch_size = 20, .shuffle = true, .seed = 11});
  Generator gen(11);
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<int64_t> expected(20);
    std::iota(expected.begin(), expected.end(), int64_t(0));
    for (size_t i = expected.size() - 1; i > 0; --i) std::swap(expected[i], expected[gen.below(i + 1)]);
    CHECK(flatten(epoch_rows(loader)) == expected);
  }
}

TEST_CASE("DataLoader runs an epoch in a given order", "[data]") {
  DataLoader loader(numbered(6), {.batch_size = 4, .shuffle = true});
  std::vector<int64_t> order{5, 0, 3, 1, 4, 2};
  std::vector<std::vector<int64_t>> batches;
  for (const Batch& batch : loader.epoch(order)) {
    std::vector<int64_t> rows;
    for (int64_t r = 0; r < batch.targets.size(0); ++r) rows.push_back(int64_t(batch.targets.at({r})));
    batches.push_back(rows);
  }
  CHECK(batches == std::vector<std::vector<int64_t>>{{5, 0, 3, 1}, {4, 2}});
  CHECK(loader.order() == order);
  REQUIRE_THROWS_WITH(loader.epoch({0, 6}), Catch::Contains("index 6 at position 1") && Catch::Contains("0..5"));
  REQUIRE_THROWS_WITH(loader.epoch({-1}), Catch::Contains("index -1 at position 0"));
}

TEST_CASE("DataLoader refuses a batch size that is not positive", "[data]") {
  REQUIRE_THROWS_WITH(DataLoader(numbered(4), {.batch_size = 0}), Catch::Contains("batch_size=0"));
  REQUIRE_THROWS_WITH(DataLoader(numbered(4), {.batch_size = -2}), Catch::Contains("batch_size=-2"));
}

TEST_CASE("DataLoader batches record no graph and carry multi-dimensional rows", "[data]") {
  Generator gen(0);
  Tensor x = Tensor::randn({5, 2, 3}, gen);
  DataLoader loader(TensorDataset(x, Tensor::arange(5)), {.batch_size = 2});
  int64_t start = 0;
  for (const Batch& batch : loader) {
    CHECK(!batch.inputs.requires_grad());
    CHECK(batch.inputs.shape() == Shape{batch.targets.size(0), 2, 3});
    for (int64_t r = 0; r < batch.inputs.size(0); ++r)
      for (int64_t j = 0; j < 6; ++j) CHECK(batch.inputs.data()[r * 6 + j] == x.data()[(start + r) * 6 + j]);
    start += batch.inputs.size(0);
  }
  CHECK(start == 5);
}

TEST_CASE("DataLoader is constructible from tensors directly", "[data]") {
  const Tensor inputs = Tensor::arange(10).reshape({5, 2}), targets = Tensor::arange(5);
  data::DataLoader loader(inputs, targets, {.batch_size = 2});
  CHECK(loader.size() == 3);
  CHECK(loader.dataset().inputs().same(inputs));
  std::vector<float> seen;
  for (const data::Batch& batch : loader)
    for (float t : batch.targets.to_vector()) seen.push_back(t);
  CHECK(seen == std::vector<float>{0, 1, 2, 3, 4});
}

}  // namespace test_data_loader
