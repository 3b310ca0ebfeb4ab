#include "tensor/small_blocks.hpp"

#include <array>
#include <vector>

#include "tensor/memory_caching.hpp"

namespace minidl::detail {
namespace {

constexpr size_t kClassBytes = 16;  // size classes: 16, 32, ..., kSmallBlockMax bytes
constexpr size_t kClasses = kSmallBlockMax / kClassBytes;
static_assert(kSmallBlockMax % kClassBytes == 0);
static_assert(kClassBytes % __STDCPP_DEFAULT_NEW_ALIGNMENT__ == 0);
// A thread keeps at most this many free blocks per class (a graph of a wide batch frees
// tens of thousands of nodes at once; beyond this they go back to the system).
constexpr size_t kMaxCachedPerClass = 1 << 14;

// Set once the thread's lists are gone, so a block freed during static destruction goes
// straight back to the system (as storage.cpp's cache does).
thread_local bool lists_destroyed = false;

struct FreeLists {
  std::array<std::vector<void*>, kClasses> blocks;  // per class, the blocks free for reuse
  ~FreeLists() {
    for (auto& list : blocks)
      for (void* block : list) ::operator delete(block);
    lists_destroyed = true;
  }
};

FreeLists& lists() {
  thread_local FreeLists instance;
  return instance;
}

// The class of a request of `bytes` (1..kSmallBlockMax) and the bytes its blocks hold.
size_t class_of(size_t bytes) { return (bytes + kClassBytes - 1) / kClassBytes - 1; }
size_t class_bytes(size_t cls) { return (cls + 1) * kClassBytes; }

}  // namespace

void* small_block_allocate(size_t bytes) {
  if (bytes == 0 || bytes > kSmallBlockMax) return ::operator new(bytes);
  const size_t cls = class_of(bytes);
  // A whole class's bytes even when not pooling: caching may be on when it is freed.
  if (lists_destroyed || !memory_caching_enabled()) return ::operator new(class_bytes(cls));
  std::vector<void*>& list = lists().blocks[cls];
  if (list.empty()) return ::operator new(class_bytes(cls));
  void* block = list.back();
  list.pop_back();
  return block;
}

void small_block_free(void* block, size_t bytes) noexcept {
  if (block == nullptr) return;
  if (bytes == 0 || bytes > kSmallBlockMax || lists_destroyed || !memory_caching_enabled()) {
    ::operator delete(block);
    return;
  }
  std::vector<void*>& list = lists().blocks[class_of(bytes)];
  if (list.size() >= kMaxCachedPerClass) {
    ::operator delete(block);
    return;
  }
  try {
    list.push_back(block);
  } catch (const std::bad_alloc&) {  // the list could not grow: give the block back instead
    ::operator delete(block);
  }
}

bool small_blocks_pooled() { return memory_caching_enabled(); }

size_t small_blocks_cached() {
  size_t count = 0;
  for (const auto& list : lists().blocks) count += list.size();
  return count;
}

}  // namespace minidl::detail
