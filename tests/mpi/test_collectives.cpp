#include <catch2/catch.hpp>

#include "minidl/distributed/collectives.hpp"
#include "minidl/distributed/environment.hpp"

using namespace minidl;
namespace dist = minidl::distributed;

TEST_CASE("all_reduce sums and averages a tensor in place on every rank", "[mpi]") {
  const int r = dist::rank(), n = dist::world_size();
  Tensor t = Tensor::full({2, 3}, float(r + 1));
  dist::all_reduce(t);
  for (int64_t i = 0; i < t.numel(); ++i) REQUIRE(t.data()[i] == float(n * (n + 1) / 2));
  Tensor a = Tensor::full({5}, float(r + 1));
  dist::all_reduce(a, dist::ReduceOp::Average);
  for (int64_t i = 0; i < a.numel(); ++i) REQUIRE(a.data()[i] == Approx((n + 1) / 2.0));
  std::vector<double> d{double(r), 1.0};
  dist::all_reduce(std::span<double>(d));
  REQUIRE(d[0] == n * (n - 1) / 2.0);
  REQUIRE(d[1] == n);
}

TEST_CASE("broadcast gives every rank the root's values", "[mpi]") {
  const int r = dist::rank(), n = dist::world_size();
  for (int root : {0, n - 1}) {
    Tensor t = Tensor::full({4}, float(10 * r + 1));
    dist::broadcast(t, root);
    for (int64_t i = 0; i < t.numel(); ++i) REQUIRE(t.data()[i] == float(10 * root + 1));
  }
}

TEST_CASE("all_gather returns every rank's values in rank order", "[mpi]") {
  const int r = dist::rank(), n = dist::world_size();
  const std::vector<double> mine{double(r), double(r) * 0.5};
  const std::vector<double> all = dist::all_gather(mine);
  REQUIRE(all.size() == size_t(2 * n));
  for (int k = 0; k < n; ++k) {
    REQUIRE(all[size_t(2 * k)] == k);
    REQUIRE(all[size_t(2 * k + 1)] == k * 0.5);
  }
}

TEST_CASE("rank and world_size describe the run", "[mpi]") {
  REQUIRE(dist::world_size() >= 1);
  REQUIRE(dist::rank() >= 0);
  REQUIRE(dist::rank() < dist::world_size());
  REQUIRE(dist::launched_by_mpirun());
  REQUIRE(dist::built_with_mpi());
  dist::barrier();
}

TEST_CASE("traffic counts each collective call and the bytes of this rank's buffer", "[mpi]") {
  const int n = dist::world_size();
  dist::reset_traffic();
  REQUIRE(dist::traffic().collectives == 0);
  REQUIRE(dist::traffic().bytes == 0);
  dist::all_reduce(Tensor::ones({3, 5}));  // 15 floats
  std::vector<double> d(7, 1.0);
  dist::all_reduce(std::span<double>(d), dist::ReduceOp::Average);                // 7 doubles
  dist::broadcast(Tensor::zeros({4}));                                            // 4 floats, counted on every rank
  const std::vector<double> all = dist::all_gather(std::vector<double>(3, 0.0));  // this rank's 3 doubles
  REQUIRE(all.size() == size_t(3 * n));
  dist::all_reduce(std::span<float>());  // empty: no call
  REQUIRE(dist::traffic().collectives == 4);
  REQUIRE(dist::traffic().bytes == 15 * 4 + 7 * 8 + 4 * 4 + 3 * 8);
  dist::reset_traffic();
  REQUIRE(dist::traffic().bytes == 0);
}

// From 256 KiB on, all_reduce sums as a ring of point-to-point exchanges in 128 KiB pieces:
// sizes that split unevenly across the ranks and into several pieces, floats and doubles.
TEST_CASE("all_reduce of large buffers sums exactly and leaves every rank the same bits", "[mpi]") {
  const int r = dist::rank(), n = dist::world_size();
  for (size_t size : {size_t(65536), size_t(100003), size_t(300007)}) {
    std::vector<float> exact(size), rounded(size);
    for (size_t i = 0; i < size; ++i) {
      exact[i] = float((r + 1) * int(i % 13));          // small integers: every order sums them exactly
      rounded[i] = 1.0f / float(3 + r + int(i % 101));  // an order-dependent float sum
    }
    dist::all_reduce(std::span<float>(exact));
    for (size_t i = 0; i < size; ++i) REQUIRE(exact[i] == float(int(i % 13) * n * (n + 1) / 2));
    dist::all_reduce(std::span<float>(rounded), dist::ReduceOp::Average);
    std::vector<float> root = rounded;
    dist::broadcast(std::span<float>(root));
    REQUIRE(root == rounded);  // bit for bit: the replicas of a model stay equal
    double expected_mean = 0;
    for (int k = 0; k < n; ++k) expected_mean += 1.0 / (3 + k);      // rounded[0] of rank k is 1 / (3 + k)
    REQUIRE(rounded[0] == Approx(expected_mean / n).epsilon(1e-6));  // a few float roundings
    std::vector<double> wide(size / 2, double(r));
    dist::all_reduce(std::span<double>(wide));
    for (double v : wide) REQUIRE(v == n * (n - 1) / 2.0);
  }
}
