#include "minidl/tensor/storage.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <limits>
#include <new>
#include <vector>

#include "tensor/memory_caching.hpp"

namespace minidl {
namespace {

using detail::kBlockAlignment;
using detail::kLargestCachedBlock;

// Size classes (memory_caching.hpp): 64-byte steps up to 4 KiB, then four per doubling up
// to kLargestCachedBlock. A block is allocated with its class's bytes, so any request of
// the class can reuse it.
constexpr size_t kFineLimit = 4096;
constexpr size_t kFineClasses = kFineLimit / kBlockAlignment;  // 64, 128, ..., 4096 bytes
constexpr int kFirstOctave = std::bit_width(kFineLimit) - 1;   // 2^12 < bytes <= 2^13
constexpr int kOctaves = std::bit_width(kLargestCachedBlock) - 1 - kFirstOctave;
constexpr size_t kClasses = kFineClasses + size_t(kOctaves) * 4;
static_assert(std::has_single_bit(kLargestCachedBlock) && kLargestCachedBlock > kFineLimit);

struct SizeClass {
  size_t index;  // kClasses when not cached
  size_t bytes;  // what the block holds
};

size_t rounded_bytes(size_t count) {
  if (count > std::numeric_limits<size_t>::max() / sizeof(float) / 2) throw std::bad_alloc();
  const size_t bytes = std::max<size_t>(count, 1) * sizeof(float);
  return (bytes + kBlockAlignment - 1) / kBlockAlignment * kBlockAlignment;
}

SizeClass size_class(size_t count) {
  const size_t bytes = rounded_bytes(count);
  if (bytes <= kFineLimit) return {bytes / kBlockAlignment - 1, bytes};
  if (bytes > kLargestCachedBlock) return {kClasses, bytes};
  const int octave = std::bit_width(bytes - 1) - 1;  // 2^octave < bytes <= 2^(octave + 1)
  const size_t base = size_t(1) << octave, quarter = base / 4;
  const size_t step = (bytes - base + quarter - 1) / quarter;  // 1..4
  return {kFineClasses + size_t(octave - kFirstOctave) * 4 + step - 1, base + step * quarter};
}

// The bytes a block of class `index` holds (size_class's inverse).
size_t class_bytes(size_t index) {
  if (index < kFineClasses) return (index + 1) * kBlockAlignment;
  const size_t octave = size_t(kFirstOctave) + (index - kFineClasses) / 4, step = (index - kFineClasses) % 4 + 1;
  return (size_t(1) << octave) + step * (size_t(1) << octave) / 4;
}

// A request may take a block of its class or of the next kReach - 1: up to 192 bytes more below
// 4 KiB, under twice its bytes above.
constexpr size_t kReach = 4;

std::atomic<size_t> cache_limit{size_t(256) << 20};

// Freed blocks by size class, per thread, so no lock is taken: training makes the same
// shapes every step, and after the first step every allocation is a hit here. A block freed
// on another thread (an OpenMP worker, a data loader's thread) joins that thread's cache;
// each thread keeps at most storage_cache_limit() bytes and frees the rest.
// Set once the thread's cache is gone, so storage freed during static destruction goes
// straight back to the system.
thread_local bool cache_destroyed = false;

struct BlockCache {
  std::array<std::vector<float*>, kClasses> free_blocks;
  size_t cached_bytes = 0;
  size_t cached_blocks = 0;
  ~BlockCache() {
    release();
    cache_destroyed = true;
  }
  void release() {
    for (auto& blocks : free_blocks) {
      for (float* block : blocks) std::free(block);
      blocks = {};
    }
    cached_bytes = cached_blocks = 0;
  }
  // A block of c's class, else of the nearest larger one within reach, c then naming its class:
  // batches whose length varies reuse the longest one's blocks rather than fresh pages, whose
  // first touch costs a page fault each (10 us under a hypervisor).
  float* take(SizeClass& c) {
    for (size_t index = c.index; index < std::min(c.index + kReach, kClasses); ++index) {
      std::vector<float*>& blocks = free_blocks[index];
      if (blocks.empty()) continue;
      float* block = blocks.back();
      blocks.pop_back();
      c = {index, class_bytes(index)};
      cached_bytes -= c.bytes;
      --cached_blocks;
      return block;
    }
    return nullptr;
  }
  bool keep(float* block, const SizeClass& c) {
    if (cached_bytes + c.bytes > cache_limit.load(std::memory_order_relaxed)) return false;
    try {
      free_blocks[c.index].push_back(block);
    } catch (const std::bad_alloc&) {  // the list could not grow: the block goes back instead
      return false;
    }
    cached_bytes += c.bytes;
    ++cached_blocks;
    return true;
  }
};

BlockCache& cache() {
  thread_local BlockCache instance;
  return instance;
}

bool caching_here(const SizeClass& c) {
  return c.index < kClasses && !cache_destroyed && detail::memory_caching_enabled();
}

}  // namespace

Storage::Storage(size_t size) : data_(nullptr), size_(size) {
  SizeClass c = size_class(size);
  if (caching_here(c)) data_ = cache().take(c);
  block_floats_ = c.bytes / sizeof(float);
  if (data_ != nullptr) return;
  void* block = std::aligned_alloc(kBlockAlignment, c.bytes);
  if (block == nullptr) throw std::bad_alloc();
  data_ = static_cast<float*>(block);
}

Storage::~Storage() {
  const SizeClass c = size_class(block_floats_);
  if (!caching_here(c) || !cache().keep(data_, c)) std::free(data_);
}

void release_cached_blocks() {
  if (!cache_destroyed) cache().release();
}

namespace detail {

size_t storage_block_bytes(size_t count) { return size_class(count).bytes; }

StorageCacheStats storage_cache_stats() {
  if (cache_destroyed) return {};
  const BlockCache& c = cache();
  return {c.cached_blocks, c.cached_bytes};
}

size_t storage_cache_limit() { return cache_limit.load(std::memory_order_relaxed); }
void set_storage_cache_limit(size_t bytes) { cache_limit.store(bytes, std::memory_order_relaxed); }

}  // namespace detail
}  // namespace minidl
