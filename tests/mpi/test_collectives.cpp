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

namespace {

// Rank k's value i: order-dependent when summed (no two ranks' values share a scale).
float value_of(int k, size_t i) { return 1.0f / float(3 + k + int(i % 101)) + float(i % 7); }

// The ring's order for element i of n: block b = i / ceil(n / N) is summed starting from
// rank b's value, then b + 1's, and so on around the ring.
float ring_order_sum(size_t n, size_t i, float divisor) {
  const int p = dist::world_size();
  const size_t width = (n + size_t(p) - 1) / size_t(p);
  const int b = int(i / width);
  float sum = value_of(b, i) / divisor;
  for (int j = 1; j < p; ++j) sum += value_of((b + j) % p, i) / divisor;
  return sum;
}

}  // namespace

// Sizes below the ring's 256 KiB (MPI_Allreduce, divided first), fewer elements than ranks
// (empty blocks), and ring sizes that split unevenly, into several 128 KiB pieces and (4
// ranks) into blocks smaller than a piece; divisors that are and are not the rank count.
TEST_CASE("all_reduce_divided gives the bits of dividing, then summing, on every rank", "[mpi]") {
  const int r = dist::rank(), n = dist::world_size();
  for (size_t size :
       {size_t(1), size_t(3), size_t(1001), size_t(65535), size_t(65536), size_t(70001), size_t(300007)}) {
    for (float divisor : {float(n), 3.0f}) {
      std::vector<float> folded(size), reference(size);
      for (size_t i = 0; i < size; ++i) {
        folded[i] = value_of(r, i);
        reference[i] = value_of(r, i) / divisor;
      }
      dist::all_reduce_divided(std::span<float>(folded), divisor);
      dist::all_reduce(std::span<float>(reference));
      REQUIRE(folded == reference);  // bit for bit: the same order as a sum of divided values
      std::vector<float> root = folded;
      dist::broadcast(std::span<float>(root));
      REQUIRE(root == folded);  // every rank the same bits
      const bool ring = n > 1 && size * sizeof(float) >= 256 * 1024;
      if (ring || n <= 2)  // the order is known (two values sum the same either way round)
        for (size_t i = 0; i < size; ++i) REQUIRE(folded[i] == ring_order_sum(size, i, divisor));
    }
  }
}

// DistributedDataParallel's use: the gradients, one segment each (null: no gradient, zeros),
// elsewhere than the bucket it sums into, cut where pieces and blocks are not.
TEST_CASE("all_reduce_divided reads segments, null ones as zeros, into a separate output", "[mpi]") {
  const int r = dist::rank(), n = dist::world_size();
  for (size_t size : {size_t(100), size_t(300007)}) {
    std::vector<float> values(size);
    for (size_t i = 0; i < size; ++i) values[i] = value_of(r, i);
    // Segments of sizes 0, 1, 7, 3 * size / 10 - 8 (null), the rest; an empty one between.
    const size_t third = 3 * size / 10;
    const std::vector<dist::Segment> segments{{values.data(), 0},         {values.data(), 1},
                                              {values.data() + 1, 7},     {nullptr, third - 8},
                                              {values.data() + third, 0}, {values.data() + third, size - third}};
    std::vector<float> out(size, -1.0f), reference(size);
    for (size_t i = 0; i < size; ++i) reference[i] = i >= 8 && i < third ? 0.0f : values[i] / float(n);
    dist::all_reduce_divided(segments, std::span<float>(out), float(n));
    dist::all_reduce(std::span<float>(reference));
    REQUIRE(out == reference);
    for (size_t i = 0; i < size; ++i) REQUIRE(values[i] == value_of(r, i));  // the input is only read
  }
}

TEST_CASE("all_reduce_divided refuses segments that do not add up to its output and counts one call", "[mpi]") {
  std::vector<float> values(5, 1.0f), out(6);
  const std::vector<dist::Segment> segments{{values.data(), 5}};
  REQUIRE_THROWS_WITH(dist::all_reduce_divided(segments, std::span<float>(out), 2.0f),
                      "all_reduce_divided: the segments hold 5 floats, the output 6");
  dist::reset_traffic();
  dist::all_reduce_divided(segments, std::span<float>(out.data(), 5), 2.0f);
  dist::all_reduce_divided(std::span<float>(), 2.0f);  // empty: no call
  REQUIRE(dist::traffic().collectives == 1);
  REQUIRE(dist::traffic().bytes == 5 * 4);
  for (size_t i = 0; i < 5; ++i) REQUIRE(out[i] == float(dist::world_size()) / 2.0f);
}
