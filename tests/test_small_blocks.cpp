// The per-thread free lists behind tensor headers and graph nodes (src/tensor/small_blocks).
#include <catch2/catch.hpp>
#include <cstring>
#include <thread>

#include "minidl/minidl.hpp"
#include "tensor/memory_caching.hpp"
#include "tensor/small_blocks.hpp"

namespace test_small_blocks {

using namespace minidl;
using detail::small_block_allocate;
using detail::small_block_free;
using detail::small_blocks_cached;

// An AddressSanitizer build, or a run with MINIDL_NO_MEMORY_CACHING=1, does not pool
// (small_blocks_pooled() is false): there every freed block goes to the system.
TEST_CASE("an unpooled build keeps no blocks", "[small_blocks]") {
  if (detail::small_blocks_pooled()) return;
  small_block_free(small_block_allocate(64), 64);
  CHECK(small_blocks_cached() == 0);
}

TEST_CASE("a freed small block is handed out again for a request of its size class", "[small_blocks]") {
  if (!detail::small_blocks_pooled()) return;
  void* a = small_block_allocate(100);
  std::memset(a, 0xab, 100);  // all its bytes are usable
  const size_t cached = small_blocks_cached();
  small_block_free(a, 100);
  CHECK(small_blocks_cached() == cached + 1);
  void* b = small_block_allocate(97);  // the same 16-byte class (97..112)
  CHECK(b == a);
  CHECK(small_blocks_cached() == cached);
  void* c = small_block_allocate(200);  // another class: not the block just taken
  CHECK(c != b);
  small_block_free(b, 97);
  small_block_free(c, 200);
}

TEST_CASE("blocks larger than the pooled sizes bypass the free lists", "[small_blocks]") {
  const size_t cached = small_blocks_cached();
  void* big = small_block_allocate(detail::kSmallBlockMax + 1);
  std::memset(big, 0, detail::kSmallBlockMax + 1);
  small_block_free(big, detail::kSmallBlockMax + 1);
  CHECK(small_blocks_cached() == cached);
}

TEST_CASE("a block freed on another thread joins that thread's list and stays usable", "[small_blocks]") {
  if (!detail::small_blocks_pooled()) return;
  void* a = small_block_allocate(64);
  std::thread([a] {
    const size_t before = small_blocks_cached();
    small_block_free(a, 64);
    void* again = small_block_allocate(64);  // this thread reuses it
    CHECK(small_blocks_cached() == before);
    CHECK(again == a);
    small_block_free(again, 64);
  }).join();  // the thread's list goes back to the system as it ends
}

// The float buffers' cache too (tests/test_storage_cache.cpp holds its own contract).
TEST_CASE("a training step's tensor headers, nodes and buffers come back to their caches", "[small_blocks]") {
  if (!detail::small_blocks_pooled()) return;
  Generator gen(0);
  nn::Linear layer(8, 4, gen);
  const Tensor x = Tensor::randn({3, 8}, gen);
  auto step = [&] {
    layer.zero_grad();
    sum(tanh(layer(x))).backward();
  };
  step();
  const size_t cached = small_blocks_cached();
  const detail::StorageCacheStats buffers = detail::storage_cache_stats();
  CHECK(cached > 0);
  CHECK(buffers.blocks > 0);
  for (int i = 0; i < 5; ++i) step();
  CHECK(small_blocks_cached() == cached);  // the same blocks every step: no growth, no leak
  CHECK(detail::storage_cache_stats().blocks == buffers.blocks);
  CHECK(detail::storage_cache_stats().bytes == buffers.bytes);
  CHECK(layer.weight.grad().defined());
}

}  // namespace test_small_blocks
