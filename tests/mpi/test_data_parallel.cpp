#include <catch2/catch.hpp>
#include <set>

#include "minidl/distributed/collectives.hpp"
#include "minidl/distributed/data_parallel.hpp"
#include "minidl/distributed/environment.hpp"
#include "minidl/minidl.hpp"
#include "support/check.hpp"

using namespace minidl;
using minidl::testing::check_close;
namespace dist = minidl::distributed;

namespace {

// The same net on every rank drawn from gen.
std::shared_ptr<nn::Sequential> small_net(uint64_t seed) {
  Generator gen(seed);
  nn::Linear first(6, 5, gen);  // drawn before the second: argument order is unspecified
  nn::Linear second(5, 3, gen);
  return std::make_shared<nn::Sequential>(std::move(first), nn::Tanh(), std::move(second));
}

// Rows [begin, end) of x (N, F) as a new tensor.
Tensor rows(const Tensor& x, int64_t begin, int64_t end) {
  const int64_t f = x.numel() / x.size(0);
  Shape shape = x.shape();
  shape[0] = end - begin;
  Tensor out = Tensor::empty(shape);
  std::copy(x.data() + begin * f, x.data() + end * f, out.data());
  return out;
}

}  // namespace

TEST_CASE("DistributedDataParallel starts every replica from rank 0's parameters", "[mpi]") {
  auto model = small_net(100 + uint64_t(dist::rank()));  // a different init on every rank
  dist::DistributedDataParallel ddp(model);
  auto rank0 = small_net(100);
  const std::vector<Tensor> mine = model->parameters(), expected = rank0->parameters();
  for (size_t i = 0; i < mine.size(); ++i) check_close(mine[i], expected[i], 0.0, 0.0);
}

TEST_CASE("DistributedDataParallel averages gradients into those of the global batch, bucket by bucket", "[mpi]") {
  const int r = dist::rank(), n = dist::world_size();
  Generator data(7);
  const int64_t global = 4 * n;
  Tensor x = Tensor::randn({global, 6}, data);
  Tensor y = Tensor::randint(0, 3, {global}, data);
  // The reference: one process, the whole batch, its mean loss.
  auto reference = small_net(1);
  cross_entropy((*reference)(x), y).backward();

  auto model = small_net(1);
  // 100 bytes: each weight (120 and 60 bytes) and the biases apart or paired, several buckets.
  dist::DistributedDataParallel ddp(model, {.bucket_bytes = 100});
  REQUIRE(ddp.buckets().size() > 1);
  std::multiset<size_t> seen;
  for (const auto& bucket : ddp.buckets()) seen.insert(bucket.begin(), bucket.end());
  REQUIRE(seen == std::multiset<size_t>{0, 1, 2, 3});
  REQUIRE(ddp.buckets().front().front() == 3);  // the last parameter first, as backward produces them
  cross_entropy(ddp(rows(x, 4 * r, 4 * r + 4)), rows(y, 4 * r, 4 * r + 4)).backward();
  ddp.reduce_gradients();
  const std::vector<Tensor> mine = model->parameters(), expected = reference->parameters();
  // Sums of 4n terms in another order, then one division: a few float roundings apart.
  for (size_t i = 0; i < mine.size(); ++i) check_close(mine[i].grad(), expected[i].grad(), 1e-6, 1e-5);
}

TEST_CASE("DistributedDataParallel broadcasts rank 0's buffers before a forward in grad mode", "[mpi]") {
  auto model = std::make_shared<nn::Sequential>(nn::BatchNorm1d(3));
  dist::DistributedDataParallel ddp(model);
  auto& bn = model->at<nn::BatchNorm1d>(0);
  bn.running_mean.fill_(float(dist::rank()));
  bn.running_var.fill_(float(dist::rank() + 1));
  model->eval();  // eval: the forward leaves the buffers as the broadcast set them
  ddp(Tensor::ones({2, 3}));
  check_close(bn.running_mean, Tensor::zeros({3}), 0.0, 0.0);
  check_close(bn.running_var, Tensor::ones({3}), 0.0, 0.0);
  {
    NoGradGuard no_grad;  // without grad mode (evaluation), no broadcast, as PyTorch
    bn.running_mean.fill_(float(dist::rank()));
    ddp(Tensor::ones({2, 3}));
  }
  check_close(bn.running_mean, Tensor::full({3}, float(dist::rank())), 0.0, 0.0);
}

TEST_CASE("DistributedDataParallel refuses a bucket size below one byte", "[mpi]") {
  REQUIRE_THROWS_WITH(dist::DistributedDataParallel(small_net(1), {.bucket_bytes = 0}),
                      "DistributedDataParallel: bucket_bytes must be positive, got 0");
}

TEST_CASE("DistributedDataParallel gives a parameter without gradient the average of zero and the others'", "[mpi]") {
  auto model = small_net(1);
  dist::DistributedDataParallel ddp(model);
  std::vector<Tensor> params = model->parameters();
  if (dist::rank() == 0) {
    params[0].set_grad(Tensor::full(params[0].shape(), float(dist::world_size())));
  }
  ddp.reduce_gradients();
  for (size_t i = 0; i < params.size(); ++i) {
    REQUIRE(params[i].grad().defined());
    check_close(params[i].grad(), Tensor::full(params[i].shape(), i == 0 ? 1.0f : 0.0f), 0.0, 1e-7);
  }
}

TEST_CASE("gradient_as_bucket_view gives the same averages, as views into the buckets, step after step", "[mpi]") {
  const int r = dist::rank();
  Generator data(11 + uint64_t(r));
  const Tensor x = Tensor::randn({4, 6}, data);
  const Tensor y = Tensor::randint(0, 3, {4}, data);
  auto copied = small_net(3), viewed = small_net(3);
  dist::DistributedDataParallel copying(copied, {.bucket_bytes = 100});
  dist::DistributedDataParallel viewing(viewed, {.bucket_bytes = 100, .gradient_as_bucket_view = true});
  for (bool set_to_none : {true, false, true}) {
    copied->zero_grad(set_to_none);
    viewed->zero_grad(set_to_none);
    cross_entropy(copying(x), y).backward();
    cross_entropy(viewing(x), y).backward();
    copying.reduce_gradients();
    viewing.reduce_gradients();
    const std::vector<Tensor> a = copied->parameters(), b = viewed->parameters();
    for (size_t i = 0; i < a.size(); ++i) check_close(b[i].grad(), a[i].grad(), 0.0, 0.0);
    // A bucket's views lie back to back: a parameter's gradient starts where the one before
    // it in the bucket ends.
    for (const auto& bucket : viewing.buckets())
      for (size_t j = 1; j < bucket.size(); ++j)
        REQUIRE(b[bucket[j]].grad().data() == b[bucket[j - 1]].grad().data() + b[bucket[j - 1]].numel());
  }
}

// A bucket of 90 903 floats (363.6 KB) goes through the ring, which divides each gradient
// where it first reads it: the same bits as dividing each gradient into the bucket, then
// summing, with the gradients as bucket views (summed in place) and copied in.
TEST_CASE("DistributedDataParallel's ring-sized bucket averages as divide-then-sum, views or copies", "[mpi]") {
  const int r = dist::rank(), n = dist::world_size();
  const auto wide_net = [] {
    Generator gen(5);
    nn::Linear first(300, 300, gen);
    nn::Linear second(300, 3, gen);
    return std::make_shared<nn::Sequential>(std::move(first), nn::Tanh(), std::move(second));
  };
  Generator data(21 + uint64_t(r));
  const Tensor x = Tensor::randn({4, 300}, data);
  const Tensor y = Tensor::randint(0, 3, {4}, data);
  auto copied = wide_net(), viewed = wide_net();
  dist::DistributedDataParallel copying(copied);
  dist::DistributedDataParallel viewing(viewed, {.gradient_as_bucket_view = true});
  REQUIRE(viewing.buckets().size() == 1);
  for (bool set_to_none : {true, false, false}) {
    copied->zero_grad(set_to_none);
    viewed->zero_grad(set_to_none);
    cross_entropy(copying(x), y).backward();
    cross_entropy(viewing(x), y).backward();
    // The reference: every gradient divided into one flat buffer in bucket order, summed.
    const std::vector<Tensor> a = copied->parameters(), b = viewed->parameters();
    std::vector<float> flat;
    for (size_t i : copying.buckets()[0])
      for (int64_t k = 0; k < a[i].numel(); ++k) flat.push_back(a[i].grad().data()[k] / float(n));
    REQUIRE(flat.size() * sizeof(float) >= 256 * 1024);
    dist::all_reduce(std::span<float>(flat));
    copying.reduce_gradients();
    viewing.reduce_gradients();
    size_t at = 0;
    for (size_t i : copying.buckets()[0]) {
      for (int64_t k = 0; k < a[i].numel(); ++k, ++at) {
        REQUIRE(a[i].grad().data()[k] == flat[at]);
        REQUIRE(b[i].grad().data()[k] == flat[at]);
      }
    }
  }
}
