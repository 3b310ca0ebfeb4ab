#pragma once
// A per-thread free list for the small objects every op makes: tensor headers
// (TensorImpl), their Storage headers and graph nodes, each allocated with its shared_ptr
// control block through std::allocate_shared. A training step makes and frees the same
// few hundred of them every step; after the first step they come from here instead of
// malloc. Blocks freed on another thread join that thread's list (any thread may free a
// block: all come from ::operator new). The float buffers themselves have their own
// cache (storage.cpp).
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace minidl::detail {

/// A block of `bytes` (any size; recycled when at most 256 bytes), aligned as ::operator new
/// aligns. Throws std::bad_alloc.
void* small_block_allocate(size_t bytes);
/// Returns a block from small_block_allocate(bytes), the same `bytes`.
void small_block_free(void* block, size_t bytes) noexcept;

/// What std::allocate_shared or a container takes: its blocks from the free lists.
template <typename T>
struct SmallBlockAllocator {
  using value_type = T;
  SmallBlockAllocator() = default;
  template <typename U>
  SmallBlockAllocator(const SmallBlockAllocator<U>&) noexcept {}  // NOLINT: rebinding, as allocators convert
  T* allocate(size_t n) { return static_cast<T*>(small_block_allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { small_block_free(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const SmallBlockAllocator<U>&) const noexcept {
    return true;
  }
};

/// std::make_shared with its block (control block and object together) from the free lists.
template <typename T, typename... Args>
std::shared_ptr<T> make_pooled(Args&&... args) {
  return std::allocate_shared<T>(SmallBlockAllocator<T>(), std::forward<Args>(args)...);
}

/// Blocks up to this many bytes are recycled; larger requests go to ::operator new.
inline constexpr size_t kSmallBlockMax = 256;

/// memory_caching_enabled() (memory_caching.hpp): false in an AddressSanitizer build or with
/// MINIDL_NO_MEMORY_CACHING=1, where every block goes to the system (so a use after free is
/// still caught).
bool small_blocks_pooled();
/// Blocks the calling thread holds for reuse, by all size classes (the tests' view).
size_t small_blocks_cached();

}  // namespace minidl::detail
