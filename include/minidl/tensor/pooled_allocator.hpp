#pragma once
// The allocator of the small objects every op makes (tensor headers, graph nodes, a node's
// list of inputs): blocks from the library's per-thread free lists (src/tensor/small_blocks).
#include <cstddef>
#include <memory>
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

}  // namespace minidl::detail
