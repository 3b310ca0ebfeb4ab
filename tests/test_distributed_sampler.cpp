#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <set>

#include "minidl/distributed/distributed_sampler.hpp"
#include "minidl/tensor/error.hpp"

namespace test_distributed_sampler {

using namespace minidl;
using distributed::DistributedSampler;

namespace {
std::vector<std::vector<int64_t>> all_ranks(int64_t n, int64_t replicas, bool shuffle, bool drop_last, int64_t epoch) {
  std::vector<std::vector<int64_t>> shards;
  for (int64_t r = 0; r < replicas; ++r) {
    DistributedSampler s(n,
                         {.num_replicas = replicas, .rank = r, .shuffle = shuffle, .seed = 5, .drop_last = drop_last});
    s.set_epoch(epoch);
    shards.push_back(s.indices());
    REQUIRE(int64_t(shards.back().size()) == s.size());
  }
  return shards;
}
}  // namespace

TEST_CASE("DistributedSampler without shuffle strides the indices as PyTorch's", "[distributed_sampler]") {
  // PyTorch: indices 0..9, 3 replicas, padded with 0, 1 to 12: rank r takes r, r + 3, ...
  const auto shards = all_ranks(10, 3, false, false, 0);
  REQUIRE(shards[0] == std::vector<int64_t>{0, 3, 6, 9});
  REQUIRE(shards[1] == std::vector<int64_t>{1, 4, 7, 0});
  REQUIRE(shards[2] == std::vector<int64_t>{2, 5, 8, 1});
  const auto cut = all_ranks(10, 3, false, true, 0);  // drop_last: 9 indices, 3 each
  REQUIRE(cut[0] == std::vector<int64_t>{0, 3, 6});
  REQUIRE(cut[2] == std::vector<int64_t>{2, 5, 8});
}

TEST_CASE("DistributedSampler's shards are disjoint and cover one permutation per epoch", "[distributed_sampler]") {
  for (bool drop_last : {false, true}) {
    const auto e0 = all_ranks(1437, 4, true, drop_last, 0);
    std::vector<int64_t> joined;
    for (const auto& s : e0) joined.insert(joined.end(), s.begin(), s.end());
    std::set<int64_t> distinct(joined.begin(), joined.end());
    if (drop_last) {
      REQUIRE(joined.size() == 1436);  // 4 x 359, one index left out
      REQUIRE(distinct.size() == 1436);
    } else {
      REQUIRE(joined.size() == 1440);  // 4 x 360: three indices twice
      REQUIRE(distinct.size() == 1437);
    }
    REQUIRE(*distinct.begin() == 0);
    REQUIRE(*distinct.rbegin() <= 1436);
    // the same seed and epoch: the same shards; another epoch: another permutation
    REQUIRE(all_ranks(1437, 4, true, drop_last, 0) == e0);
    REQUIRE(all_ranks(1437, 4, true, drop_last, 1) != e0);
  }
}

TEST_CASE("DistributedSampler pads a dataset smaller than the replicas by repeating it", "[distributed_sampler]") {
  const auto shards = all_ranks(2, 5, false, false, 0);
  REQUIRE(shards == std::vector<std::vector<int64_t>>{{0}, {1}, {0}, {1}, {0}});
  const auto none = all_ranks(2, 5, false, true, 0);
  for (const auto& s : none) REQUIRE(s.empty());
}

TEST_CASE("DistributedSampler refuses a bad rank or replica count", "[distributed_sampler]") {
  REQUIRE_THROWS_WITH(DistributedSampler(10, {.num_replicas = 0}),
                      "DistributedSampler: num_replicas must be at least 1, got 0");
  REQUIRE_THROWS_WITH(DistributedSampler(10, {.num_replicas = 2, .rank = 2}),
                      "DistributedSampler: invalid rank 2, rank should be in the interval [0, 1]");
  REQUIRE_THROWS_WITH(DistributedSampler(-1, {.num_replicas = 2}),
                      "DistributedSampler: dataset size must not be negative, got -1");
}

}  // namespace test_distributed_sampler
