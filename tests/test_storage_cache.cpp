// The per-thread cache of Storage's float buffers (src/tensor/storage.cpp) and the switch that
// turns it and the small-block free lists off (src/tensor/memory_caching.hpp).
#include <omp.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "minidl/minidl.hpp"
#include "tensor/memory_caching.hpp"
#include "tensor/small_blocks.hpp"

namespace test_storage_cache {

using namespace minidl;
using detail::storage_block_bytes;
using detail::storage_cache_stats;

namespace {

bool aligned(const float* p) { return reinterpret_cast<uintptr_t>(p) % detail::kBlockAlignment == 0; }

// Restores the process-wide switch and limit a test changes, even when a check fails.
struct CacheSettingsGuard {
  bool caching = detail::memory_caching_enabled();
  size_t limit = detail::storage_cache_limit();
  ~CacheSettingsGuard() {
    detail::set_memory_caching(caching);
    detail::set_storage_cache_limit(limit);
  }
};

}  // namespace

TEST_CASE("storage blocks round up to 64 bytes, then to a size class at most 25% larger", "[storage_cache]") {
  CHECK(storage_block_bytes(0) == 64);
  CHECK(storage_block_bytes(1) == 64);
  CHECK(storage_block_bytes(16) == 64);
  CHECK(storage_block_bytes(17) == 128);
  CHECK(storage_block_bytes(1024) == 4096);  // the last 64-byte step
  CHECK(storage_block_bytes(1025) == 5120);  // then quarters of 4096
  CHECK(storage_block_bytes(2048) == 8192);
  CHECK(storage_block_bytes(2049) == 10240);
  CHECK(storage_block_bytes(64 * 64) == 16384);  // the lesson's weights fit their class exactly
  size_t previous = 0;
  for (size_t count = 1; count <= (size_t(1) << 24); count += 1 + count / 7) {
    const size_t needed = (count * sizeof(float) + 63) / 64 * 64;
    const size_t bytes = storage_block_bytes(count);
    INFO("count " << count << ": " << bytes << " bytes");
    CHECK(bytes % 64 == 0);
    CHECK(bytes >= needed);
    CHECK(bytes * 4 <= needed * 5);
    CHECK(bytes >= previous);
    previous = bytes;
  }
  // Past the largest class: never cached, so no class rounding.
  const size_t big = detail::kLargestCachedBlock / sizeof(float) + 1;
  CHECK(storage_block_bytes(big) == detail::kLargestCachedBlock + 64);
}

TEST_CASE("storage buffers are 64-byte aligned and writable to their end, cached or not", "[storage_cache]") {
  CacheSettingsGuard guard;
  for (bool caching : {true, false}) {
    detail::set_memory_caching(caching);
    for (size_t count : {size_t(1), size_t(15), size_t(1000), size_t(1025), size_t(300000)}) {
      Storage s(count);
      CHECK(aligned(s.data()));
      CHECK(s.size() == count);
      std::fill_n(s.data(), count, 1.5f);
      CHECK(s.data()[count - 1] == 1.5f);
    }
  }
}

TEST_CASE("a freed storage block is handed out again for a request of its size class", "[storage_cache]") {
  if (!detail::memory_caching_enabled()) return;  // an AddressSanitizer build caches nothing
  release_cached_blocks();
  const float* first = nullptr;
  {
    Storage a(100);  // 400 bytes: the 448-byte class
    first = a.data();
  }
  CHECK(storage_cache_stats().blocks == 1);
  CHECK(storage_cache_stats().bytes == 448);
  {
    Storage other(2000);  // another class: not that block
    CHECK(other.data() != first);
  }
  {
    Storage b(110);  // 440 bytes: the same class
    CHECK(b.data() == first);
    CHECK(storage_cache_stats().blocks == 1);  // only the 2000-float block is left
  }
  release_cached_blocks();
  CHECK(storage_cache_stats().blocks == 0);
  CHECK(storage_cache_stats().bytes == 0);
}

TEST_CASE("a request takes a free block of up to three classes larger, and it returns to its own class",
          "[storage_cache]") {
  if (!detail::memory_caching_enabled()) return;
  release_cached_blocks();
  const float* block = nullptr;
  { block = Storage(4096).data(); }  // 16 KiB: a class of its own
  {
    Storage smallest(2048);  // 8 KiB: four classes below, out of reach
    CHECK(smallest.data() != block);
  }
  release_cached_blocks();
  { block = Storage(4096).data(); }
  {
    Storage smaller(2049);  // 8196 bytes: the 10240-byte class, three below
    CHECK(smaller.data() == block);
    CHECK(storage_cache_stats().blocks == 0);
  }
  CHECK(storage_cache_stats().bytes == 16384);  // back in the 16 KiB class
  {
    Storage again(4096);
    CHECK(again.data() == block);
  }
  release_cached_blocks();
}

TEST_CASE("a thread caches at most the limit's bytes and frees the rest", "[storage_cache]") {
  if (!detail::memory_caching_enabled()) return;
  CacheSettingsGuard guard;
  release_cached_blocks();
  detail::set_storage_cache_limit(3 * 4096);
  {
    std::vector<std::unique_ptr<Storage>> live;
    for (int i = 0; i < 5; ++i) live.push_back(std::make_unique<Storage>(1024));  // 4096 bytes each
  }
  CHECK(storage_cache_stats().blocks == 3);
  CHECK(storage_cache_stats().bytes == 3 * 4096);
  { Storage larger(4096); }  // 16 KiB more would pass the limit: freed
  CHECK(storage_cache_stats().bytes == 3 * 4096);
  // Buffers larger than the largest class are never cached, whatever the limit.
  detail::set_storage_cache_limit(size_t(1) << 40);
  { Storage huge(detail::kLargestCachedBlock / sizeof(float) + 1); }
  CHECK(storage_cache_stats().bytes == 3 * 4096);
  release_cached_blocks();
}

TEST_CASE("with memory caching off every freed block goes to the system", "[storage_cache]") {
  CacheSettingsGuard guard;
  release_cached_blocks();
  detail::set_memory_caching(false);
  CHECK_FALSE(detail::memory_caching_enabled());
  CHECK_FALSE(detail::small_blocks_pooled());
  const size_t small_before = detail::small_blocks_cached();
  {
    Tensor t = Tensor::ones({64, 64});
    CHECK(aligned(t.data()));
  }
  { Storage s(7); }
  CHECK(storage_cache_stats().blocks == 0);
  CHECK(detail::small_blocks_cached() == small_before);
  // Blocks made while caching was off are cached, whole, once it is back on.
  auto made_off = std::make_unique<Storage>(1000);
  void* header = detail::small_block_allocate(40);
  detail::set_memory_caching(guard.caching);
  if (detail::memory_caching_enabled()) {
    const float* data = made_off->data();
    made_off.reset();
    CHECK(storage_cache_stats().blocks == 1);
    Storage again(1008);  // 4000 and 4032 bytes: one class, all of it usable
    CHECK(again.data() == data);
    std::fill_n(again.data(), 1008, 2.0f);
    // The 48-byte class's list may already be full after other tests' graphs: then the
    // block goes to the system, as the list's bound says.
    const size_t small_cached = detail::small_blocks_cached();
    detail::small_block_free(header, 40);
    if (detail::small_blocks_cached() == small_cached + 1) {
      void* header_again = detail::small_block_allocate(48);  // 40 and 48: one 16-byte class
      CHECK(header_again == header);
      std::memset(header_again, 0, 48);
      detail::small_block_free(header_again, 48);
    }
  } else {
    detail::small_block_free(header, 40);
  }
  release_cached_blocks();
}

TEST_CASE("MINIDL_NO_MEMORY_CACHING: set to anything but empty or 0 turns caching off", "[storage_cache]") {
  CHECK_FALSE(detail::no_caching_requested(nullptr));
  CHECK_FALSE(detail::no_caching_requested(""));
  CHECK_FALSE(detail::no_caching_requested("0"));
  CHECK(detail::no_caching_requested("1"));
  CHECK(detail::no_caching_requested("yes"));
}

// tests/CMakeLists.txt also runs this case with MINIDL_NO_MEMORY_CACHING=1 in the environment.
TEST_CASE("the environment's MINIDL_NO_MEMORY_CACHING is honoured at startup", "[storage_cache][storage_cache_env]") {
  if (!detail::no_caching_requested(std::getenv("MINIDL_NO_MEMORY_CACHING"))) return;
  CHECK_FALSE(detail::memory_caching_enabled());
  release_cached_blocks();
  {
    Generator gen(0);
    nn::Linear layer(8, 4, gen);
    sum(layer(Tensor::randn({3, 8}, gen))).backward();
  }
  CHECK(storage_cache_stats().blocks == 0);
  CHECK(detail::small_blocks_cached() == 0);
}

TEST_CASE("storage made and freed on OpenMP threads, each freeing another's, keeps its values", "[storage_cache]") {
  constexpr int kThreads = 4, kPerThread = 200;
  std::vector<std::unique_ptr<Storage>> slots(size_t(kThreads * kPerThread));
  std::vector<int> bad(kThreads, 0);
  auto count_of = [](int thread, int i) { return size_t(1 + (thread * 37 + i * 101) % 5000); };
  auto value_of = [](int thread, int i) { return float(thread * 1000 + i); };
#pragma omp parallel num_threads(kThreads)
  {
    const int me = omp_get_thread_num(), threads = omp_get_num_threads();
    for (int round = 0; round < 3; ++round) {
      for (int i = 0; i < kPerThread; ++i) {  // make and fill this thread's slots
        auto& slot = slots[size_t(me * kPerThread + i)];
        slot = std::make_unique<Storage>(count_of(me, i));
        std::fill_n(slot->data(), slot->size(), value_of(me, i));
      }
#pragma omp barrier
      const int other = (me + 1) % threads;  // check and free the next thread's
      for (int i = 0; i < kPerThread; ++i) {
        auto& slot = slots[size_t(other * kPerThread + i)];
        const float want = value_of(other, i);
        if (!std::all_of(slot->data(), slot->data() + slot->size(), [&](float v) { return v == want; })) ++bad[me];
        slot.reset();
      }
#pragma omp barrier
    }
  }
  for (int b : bad) CHECK(b == 0);
  // Live buffers never overlap: a block is never handed to two storages at once.
  std::vector<std::unique_ptr<Storage>> live;
  for (int i = 0; i < 300; ++i) live.push_back(std::make_unique<Storage>(count_of(0, i)));
  std::vector<const float*> starts;
  for (const auto& s : live) starts.push_back(s->data());
  std::sort(starts.begin(), starts.end());
  CHECK(std::adjacent_find(starts.begin(), starts.end()) == starts.end());
}

}  // namespace test_storage_cache
