#include "minidl/tensor/storage.hpp"

#include <cstdlib>
#include <new>
#include <unordered_map>
#include <vector>

namespace minidl {
namespace {

constexpr size_t kAlignment = 64;

// Freed blocks by byte size, per thread. Training makes the same shapes every step, so
// after the first step every allocation is a hit here. Blocks freed on another thread
// simply join that thread's cache.
// Set once the thread's cache is gone, so storage freed during static destruction
// goes straight back to the system.
thread_local bool cache_destroyed = false;

struct BlockCache {
  std::unordered_map<size_t, std::vector<void*>> free_blocks;
  size_t cached_bytes = 0;
  ~BlockCache() {
    release();
    cache_destroyed = true;
  }
  void release() {
    for (auto& [bytes, blocks] : free_blocks)
      for (void* block : blocks) std::free(block);
    free_blocks.clear();
    cached_bytes = 0;
  }
};

// A thread keeps at most this much freed memory for reuse.
constexpr size_t kMaxCachedBytes = size_t(256) << 20;

BlockCache& cache() {
  thread_local BlockCache instance;
  return instance;
}

size_t rounded_bytes(size_t count) {
  size_t bytes = std::max<size_t>(count, 1) * sizeof(float);
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace

Storage::Storage(size_t size) : data_(nullptr), size_(size) {
  size_t bytes = rounded_bytes(size);
  auto* blocks_ptr = cache_destroyed ? nullptr : &cache().free_blocks[bytes];
  if (blocks_ptr != nullptr && !blocks_ptr->empty()) {
    auto& blocks = *blocks_ptr;
    data_ = static_cast<float*>(blocks.back());
    blocks.pop_back();
    cache().cached_bytes -= bytes;
    return;
  }
  void* block = std::aligned_alloc(kAlignment, bytes);
  if (block == nullptr) throw std::bad_alloc();
  data_ = static_cast<float*>(block);
}

Storage::~Storage() {
  if (cache_destroyed) {
    std::free(data_);
    return;
  }
  size_t bytes = rounded_bytes(size_);
  BlockCache& c = cache();
  if (c.cached_bytes + bytes > kMaxCachedBytes) {
    std::free(data_);
    return;
  }
  c.free_blocks[bytes].push_back(data_);
  c.cached_bytes += bytes;
}

void release_cached_blocks() { cache().release(); }

}  // namespace minidl
