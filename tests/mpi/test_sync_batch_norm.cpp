#include <catch2/catch.hpp>

#include "minidl/distributed/collectives.hpp"
#include "minidl/distributed/environment.hpp"
#include "minidl/distributed/sync_batch_norm.hpp"
#include "minidl/minidl.hpp"
#include "support/check.hpp"

using namespace minidl;
using minidl::testing::check_close;
namespace dist = minidl::distributed;

namespace {

// Rank r's shard of a global batch: r + 2 items (uneven on purpose), after the ranks below it.
struct Split {
  int64_t begin, end, total;
};
Split split_for(int rank, int world) {
  int64_t begin = 0, total = 0;
  for (int k = 0; k < world; ++k) {
    if (k == rank) begin = total;
    total += k + 2;
  }
  return {begin, begin + rank + 2, total};
}

Tensor items(const Tensor& x, int64_t begin, int64_t end) {
  const int64_t per_item = x.numel() / x.size(0);
  Shape shape = x.shape();
  shape[0] = end - begin;
  Tensor out = Tensor::empty(shape);
  std::copy(x.data() + begin * per_item, x.data() + end * per_item, out.data());
  return out;
}

// SyncBatchNorm on this rank's shard against BatchNorm over the whole global batch, which
// every rank computes alone: outputs, running statistics, and the gradients of
// sum(out * probe) for input, weight and bias (weight and bias summed over the ranks,
// as DistributedDataParallel's average times world_size).
template <typename BatchNorm>
void check_against_batch_norm(Shape item_shape, float mean, float spread) {
  const int r = dist::rank(), n = dist::world_size();
  const Split s = split_for(r, n);
  Shape shape{s.total};
  shape.insert(shape.end(), item_shape.begin(), item_shape.end());
  Generator gen(3);
  Tensor x = Tensor::randn(shape, gen, mean, spread);
  Tensor probe = Tensor::randn(shape, gen);
  const int64_t C = item_shape[0];
  BatchNorm reference(C);
  dist::SyncBatchNorm sync(C);
  {
    NoGradGuard no_grad;  // the same affine parameters, not the defaults (1 and 0)
    for (auto* bn : std::initializer_list<nn::BatchNormBase*>{&reference, &sync}) {
      for (int64_t c = 0; c < C; ++c) {
        bn->weight.data()[c] = 0.5f + 0.25f * float(c);
        bn->bias.data()[c] = 0.1f * float(c);
      }
    }
  }
  Tensor xg = x.detach().requires_grad_();
  sum(reference(xg) * probe).backward();
  Tensor expected_out = reference(x.detach());  // the second forward moves the stats again: do it on both

  Tensor xs = items(x, s.begin, s.end).requires_grad_();
  Tensor out = sync(xs);
  sum(out * items(probe, s.begin, s.end)).backward();
  Tensor again = sync(items(x, s.begin, s.end));

  // Means and variances in double, then float rounding: BatchNorm's chunked sums differ only
  // in the last bits. Inputs near 1e4 against a spread of 0.1 keep this (no E[x^2] - E[x]^2).
  const double atol = 2e-5, rtol = 2e-5;
  check_close(again.detach(), items(expected_out.detach(), s.begin, s.end), atol, rtol);
  check_close(sync.running_mean, reference.running_mean, atol * std::abs(mean) + 1e-6, rtol);
  check_close(sync.running_var, reference.running_var, atol, 1e-4);
  REQUIRE(sync.num_batches_tracked.data()[0] == 2.0f);
  // dx involves x - mean: compared relative to the gradient's scale, rstd ~ 1 / spread.
  check_close(xs.grad(), items(xg.grad(), s.begin, s.end), 1e-4 / spread, 1e-4);
  Tensor dw = sync.weight.grad().clone(), db = sync.bias.grad().clone();
  dist::all_reduce(dw);
  dist::all_reduce(db);
  check_close(dw, reference.weight.grad(), 1e-4, 1e-4);
  check_close(db, reference.bias.grad(), 1e-4, 1e-4);
}

}  // namespace

TEST_CASE("SyncBatchNorm over the ranks' shards equals BatchNorm1d over the global batch", "[mpi]") {
  check_against_batch_norm<nn::BatchNorm1d>({4}, 0.0f, 1.0f);
  check_against_batch_norm<nn::BatchNorm1d>({3, 5}, 2.0f, 3.0f);
}

TEST_CASE("SyncBatchNorm keeps its digits for a mean of 1e4 against a spread of 0.1", "[mpi]") {
  check_against_batch_norm<nn::BatchNorm1d>({3}, 1e4f, 0.1f);
}

TEST_CASE("SyncBatchNorm over the ranks' shards equals BatchNorm2d over the global batch", "[mpi]") {
  check_against_batch_norm<nn::BatchNorm2d>({2, 3, 4}, 1.0f, 2.0f);
}

TEST_CASE("SyncBatchNorm in eval mode normalizes with its running statistics, as BatchNorm", "[mpi]") {
  dist::SyncBatchNorm sync(2);
  nn::BatchNorm1d bn(2);
  sync.eval();
  bn.eval();
  Tensor x = Tensor::from_vector({1, 5, 3, 2}, {2, 2});
  check_close(sync(x), bn(x), 0.0, 0.0);
  REQUIRE(sync.num_batches_tracked.data()[0] == 0.0f);
}

TEST_CASE("SyncBatchNorm refuses a global batch of one value per channel", "[mpi]") {
  dist::SyncBatchNorm sync(3);
  const int64_t rows = dist::rank() == 0 ? 1 : 0;  // one row over all ranks
  REQUIRE_THROWS_WITH(sync(Tensor::ones({rows, 3})),
                      Catch::Contains("Expected more than 1 value per channel when training") &&
                          Catch::Contains("1 values per channel over all"));
  REQUIRE_THROWS_WITH(sync(Tensor::ones({3})), Catch::Contains("SyncBatchNorm: expected at least 2D input"));
  const Tensor x = Tensor::ones({4, 3}), three = Tensor::ones({3});
  REQUIRE_THROWS_WITH(dist::sync_batch_norm(x, three, Tensor(), Tensor(), Tensor(), 0.1, 1e-5),
                      "sync_batch_norm: running_mean and running_var must be given together");
  REQUIRE_THROWS_WITH(dist::sync_batch_norm(x, three, three, Tensor::ones({2}), Tensor(), 0.1, 1e-5),
                      "sync_batch_norm: expected weight of shape [3] for an input of shape [4, 3], got [2]");
}

TEST_CASE("convert_sync_batchnorm turns a Sequential's BatchNorm layers into SyncBatchNorm with their state", "[mpi]") {
  Generator gen(0);
  auto model = std::make_shared<nn::Sequential>(nn::Linear(4, 3, gen), nn::BatchNorm1d(3), nn::Tanh());
  auto& bn = model->at<nn::BatchNorm1d>(1);
  bn.running_mean.fill_(0.5f);
  model->eval();
  auto converted = std::dynamic_pointer_cast<nn::Sequential>(dist::convert_sync_batchnorm(model));
  REQUIRE(converted);
  REQUIRE(converted->size() == 3);
  REQUIRE((*converted)[0] == (*model)[0]);  // other layers shared
  REQUIRE((*converted)[1]->type_name() == "SyncBatchNorm");
  REQUIRE(!converted->is_training());
  REQUIRE(!(*converted)[1]->is_training());
  const nn::StateDict a = model->state_dict(), b = converted->state_dict();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].name == b[i].name);
    check_close(a[i].value, b[i].value, 0.0, 0.0);
  }
}

namespace {
struct Holder : nn::Module {
  Holder() { register_module("norm", std::make_shared<nn::BatchNorm1d>(2)); }
  Tensor forward(const Tensor& x) override { return x; }
  std::string type_name() const override { return "Holder"; }
};
}  // namespace

TEST_CASE("convert_sync_batchnorm refuses a BatchNorm it cannot replace", "[mpi]") {
  REQUIRE_THROWS_WITH(dist::convert_sync_batchnorm(std::make_shared<Holder>()),
                      "convert_sync_batchnorm: Holder holds a BatchNorm, but only a BatchNorm itself or the children "
                      "of a Sequential can be replaced");
  auto tanh = std::make_shared<nn::Tanh>();
  REQUIRE(dist::convert_sync_batchnorm(tanh) == tanh);
}
